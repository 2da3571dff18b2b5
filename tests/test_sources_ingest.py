"""Profiler times, fusion decisions and Spyre specs, through the whole ingest (not just the parsers)."""

from __future__ import annotations

import json
import re
from collections import defaultdict

import pytest

from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import reader, FIXTURES

GPU_RUN = FIXTURES / "runs" / "gpu-torch2.11" / "mlp__train__fp32__default"


@pytest.fixture(scope="module")
def gpu(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("gpu") / "wh.duckdb")
    ingest_paths([GPU_RUN], db)
    con = reader(db)
    yield con
    con.close()


def test_profiled_kernel_times_equal_the_trace_events(gpu):
    events = [e for e in json.loads((GPU_RUN / "profile.json").read_text())["traceEvents"] if e.get("cat") == "kernel"]
    expected = defaultdict(lambda: [0, 0.0])
    for e in events:
        expected[e["name"]][0] += 1
        expected[e["name"]][1] += e["dur"]
    got = defaultdict(lambda: [0, 0.0])
    for name, calls, dur in gpu.execute(
            "SELECT name, calls, duration_us FROM timings WHERE source = 'profiler'").fetchall():
        got[name][0] += calls
        got[name][1] += dur
    assert got.keys() == expected.keys()
    for name, (calls, dur) in expected.items():
        assert got[name][0] == calls and got[name][1] == pytest.approx(dur)


def test_every_triton_kernel_in_the_profile_joins_its_kernel_row(gpu):
    profiled = {e["name"] for e in json.loads((GPU_RUN / "profile.json").read_text())["traceEvents"]
                if e.get("cat") == "kernel" and e["name"].startswith("triton_")}
    rows = gpu.execute(
        "SELECT t.name, t.graph_id, k.graph_id FROM timings t LEFT JOIN kernels k "
        "ON k.run_id = t.run_id AND k.kernel_name = t.name AND k.generated "
        "AND (t.graph_id IS NULL OR k.graph_id = t.graph_id) "
        "WHERE t.source = 'profiler' AND t.name LIKE 'triton_%'").fetchall()
    assert {r[0] for r in rows} == profiled and profiled
    assert all(r[2] is not None for r in rows)  # joined to a generated kernel
    assert all(r[1] == r[2] for r in rows)  # and attributed to that kernel's graph
    # forward kernels in the forward graph, backward ones in the backward graph
    code = {g: (d / "output_code.py").read_text() for d in GPU_RUN.rglob("model__0_*") for g in [
        "0_" + re.search(r"_(forward|backward)_", d.name).group(1)]}
    for name, graph, _ in rows:
        assert f"\n{name} = async_compile.triton(" in code[graph]


def test_refused_fusions_equal_the_cannot_fuse_lines(gpu):
    text = (GPU_RUN / "torch_logs.txt").read_text()
    expected = sorted(re.findall(r"cannot fuse (\S+) with (\S+): (.*)$", text, re.M))
    got = sorted(gpu.execute(
        "SELECT node_a, node_b, reason FROM fusion_decisions WHERE decision = 'refused'").fetchall())
    assert [tuple(g) for g in got] == expected and expected


def test_spyre_examples_are_runs_with_a_kernel_per_spec(tmp_path):
    root = FIXTURES / "spyre"
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([root], db)
    con = reader(db)
    folders = sorted(d for d in root.iterdir() if d.is_dir())
    assert s.runs == len(folders) and s.errors == 0
    got = dict(con.execute(
        "SELECT r.model, count(*) FROM kernels k JOIN runs r USING (run_id) GROUP BY ALL").fetchall())
    assert got == {d.name: len(list(d.glob("sdsc_*.json"))) for d in folders}
    assert {r[0] for r in con.execute("SELECT DISTINCT backend FROM runs").fetchall()} == {"spyre"}
    cores = dict(con.execute(
        "SELECT r.model, max((k.details->>'num_cores')::INT) FROM kernels k JOIN runs r USING (run_id) "
        "GROUP BY ALL").fetchall())
    softmax = [json.loads((root / "softmax" / f"sdsc_{i}.json").read_text()) for i in range(6)]
    assert cores["softmax"] == max(_find(doc, "numCoresUsed_") for doc in softmax)


def _find(doc, key):
    if isinstance(doc, dict):
        if key in doc:
            return doc[key]
        for v in doc.values():
            found = _find(v, key)
            if found is not None:
                return found
    elif isinstance(doc, list):
        for v in doc:
            found = _find(v, key)
            if found is not None:
                return found
    return None
