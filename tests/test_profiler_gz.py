"""Profiler traces as `tensorboard_trace_handler(use_gzip=True)` saves them (`*.pt.trace.json.gz`),
and traces whose compiled code has no `Torch-Compiled Region: <id>` span (tests/fixtures/SOURCES.md)."""

from __future__ import annotations

import gzip
import json
from collections import Counter

from inductor_warehouse.ingest.discover import discover
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.ingest.parsers.profiler import parse_profiler
from tests.conftest import FIXTURES, reader

HTA = FIXTURES / "profiler" / "facebookresearch__HolisticTraceAnalysis"
TRITON = HTA / "triton_example.json.gz"  # torch.compile on an A100: one Triton kernel in region 0/0
STEP = HTA / "rank0_one_step.json.gz"  # CompiledFunction / CompiledFunctionBackward spans, no region


def events(path) -> list[dict]:
    return json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]


def run_folder(tmp_path, name: str, data: bytes):
    tmp_path.mkdir()
    (tmp_path / "manifest.json").write_text(json.dumps({"model": "m"}))
    (tmp_path / name).write_bytes(data)
    return tmp_path


def test_a_gzipped_trace_is_read_as_the_json_one(tmp_path):
    folder = run_folder(tmp_path / "run", "host_1234.1700000000.pt.trace.json.gz", TRITON.read_bytes())
    assert [a.kind for r in discover([folder]).runs for a in r.artifacts if a.kind != "manifest"] == ["profiler"]
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([folder], db)
    evs = events(TRITON)
    kernels = [e for e in evs if e.get("cat") == "kernel"]
    launch = next(e for e in evs if e.get("args", {}).get("correlation") == kernels[0]["args"]["correlation"]
                  and e.get("cat") == "cuda_driver")
    region = next(e["name"] for e in evs if e.get("cat") == "cpu_op" and e["name"].startswith("Torch-Compiled Region")
                  and e["tid"] == launch["tid"] and e["ts"] <= launch["ts"] <= e["ts"] + e["dur"])
    con = reader(db)
    assert con.execute("SELECT compile_id, phase, name, calls, duration_us FROM timings").fetchall() == [
        (region.split(": ")[1], "inference", kernels[0]["name"], 1, kernels[0]["dur"])]
    assert len(kernels) == 1 and (region, kernels[0]["dur"]) == ("Torch-Compiled Region: 0/0", 1.76)
    assert con.execute("SELECT device_name FROM runs").fetchall() == [(json.loads(gzip.decompress(
        TRITON.read_bytes()))["deviceProperties"][0]["name"],)]
    assert con.execute("SELECT count(*) FROM ingest_errors").fetchone() == (0,)


def test_a_damaged_gzipped_trace_is_an_error_of_its_run(tmp_path):
    data = STEP.read_bytes()
    folder = run_folder(tmp_path / "run", "profile.json.gz", data[: len(data) // 2])
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([folder], db)
    con = reader(db)
    assert con.execute("SELECT path, kind, severity FROM ingest_errors").fetchall() == [
        ("profile.json.gz", "profiler", "error")]
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (1,)


def test_compiled_forward_and_backward_alike_without_regions():
    evs = events(STEP)
    spans = [(e["tid"], e["ts"], e["ts"] + e["dur"], e["name"]) for e in evs if e.get("cat") == "cpu_op"]
    assert {s[3] for s in spans} == {"CompiledFunction", "CompiledFunctionBackward"}
    launches = {e["args"]["correlation"]: (e["tid"], e["ts"]) for e in evs if e.get("cat") == "cuda_runtime"}
    # phase of each kernel launch, read from the spans around it
    expected = Counter()
    for e in evs:
        if e.get("cat") == "kernel":
            tid, ts = launches[e["args"]["correlation"]]
            inside = {name for t, s, end, name in spans if t == tid and s <= ts <= end}
            expected["backward" if "CompiledFunctionBackward" in inside else
                     "forward" if "CompiledFunction" in inside else None] += 1
    got = Counter()
    parsed = parse_profiler(gzip.decompress(STEP.read_bytes()))
    for r in parsed.rows["timings"]:
        got[r["phase"]] += r["calls"]
        assert r["compile_id"] is None  # no region names the compile
    assert got == expected
    assert (expected["forward"], expected["backward"]) == (120, 160) and expected[None] > 0


def test_a_region_that_names_no_compile_is_compiled_code_still():
    """Before 2.6 the region span reads `Torch-Compiled Region`, without its compile id."""
    def op(name, ts, dur):
        return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur}

    def launched(name, ts, corr):
        return [{"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 1, "tid": 1, "ts": ts, "dur": 1,
                 "args": {"correlation": corr}},
                {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts + 5, "dur": 2.0,
                 "args": {"correlation": corr}}]
    evs = [op("Torch-Compiled Region", 0, 100), *launched("triton_poi_fused_0", 10, 1), *launched("eager", 200, 2)]
    rows = parse_profiler(json.dumps({"traceEvents": evs}).encode()).rows["timings"]
    assert sorted((r["name"], r["compile_id"], r["phase"]) for r in rows) == [
        ("eager", None, None), ("triton_poi_fused_0", None, "inference")]
