"""A profiler trace is recognised by its top-level keys wherever they sit: a harness that rewrites
the trace may write an object of its own before `traceEvents` (tests/fixtures/SOURCES.md), and a
file named as tensorboard_trace_handler names traces is one even when it cannot be read."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from inductor_warehouse.ingest.discover import discover
from inductor_warehouse.ingest.listing import SNIFF_BYTES, entry, sniff
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.ingest.parsers.profiler import trace_head
from inductor_warehouse.ingest.sources import classify
from tests.conftest import FIXTURES, reader

# a TraceLens test trace: its harness's 20 KB `metadata` object comes before `traceEvents`
METADATA_FIRST = FIXTURES / "profiler" / "AMD-AGI__TraceLens" / "h100" / "gaunernst_bert-small-uncased__1016001.json.gz"
HTA = FIXTURES / "profiler" / "facebookresearch__HolisticTraceAnalysis"


def test_a_trace_whose_events_start_past_the_first_bytes_is_read(tmp_path):
    raw = gzip.decompress(METADATA_FIRST.read_bytes())
    doc = json.loads(raw)
    assert list(doc)[:2] == ["metadata", "traceEvents"] and raw.find(b'"traceEvents"') > SNIFF_BYTES
    runs = discover([METADATA_FIRST]).runs
    assert [[a.kind for a in r.artifacts] for r in runs] == [["profiler"]]
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([METADATA_FIRST], db)
    kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
    con = reader(db)
    calls, total = con.execute("SELECT sum(calls), sum(duration_us) FROM timings").fetchone()
    assert (calls, round(total, 3)) == (len(kernels), round(sum(e["dur"] for e in kernels), 3)) == (60, 307.197)
    assert con.execute("SELECT device_name FROM runs").fetchall() == [(doc["deviceProperties"][0]["name"],)]
    assert con.execute("SELECT count(*) FROM ingest_errors").fetchone() == (0,)


def test_the_head_tells_by_top_level_keys():
    raw = gzip.decompress(METADATA_FIRST.read_bytes())
    at = raw.find(b'"traceEvents"')
    assert trace_head(raw[:SNIFF_BYTES])[0] is None  # inside the metadata object: a longer head may tell
    assert trace_head(raw[: at + 40]) == (True, {"metadata": json.loads(raw)["metadata"]})
    # a key of that name inside another value is not the trace's
    nested = json.dumps({"metadata": {"traceEvents": []}, "rows": [1, 2]}).encode()
    assert trace_head(nested) == (False, {"metadata": {"traceEvents": []}, "rows": [1, 2]})
    assert trace_head(b'[{"traceEvents": []}]')[0] is False
    assert trace_head(b'{"traceEvents": {"a": 1}}')[0] is False


def test_a_large_json_of_another_kind_is_not_a_trace(tmp_path):
    big = tmp_path / "config.json"
    big.write_text(json.dumps({"layers": [{"name": f"l{i}", "shape": [i, i]} for i in range(40000)],
                               "note": "traceEvents"}))
    assert big.stat().st_size > 1 << 20
    assert classify(entry(big), sniff) is None


def test_a_file_named_as_a_trace_that_cannot_be_read_is_an_error(tmp_path):
    folder = tmp_path / "log"
    folder.mkdir()
    # tensorboard_trace_handler's name; the harness wrote a list, not torch.profiler's object
    (folder / "host_1234.1700000000000.pt.trace.json").write_text(json.dumps([{"name": "x"}] * 2000))
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([folder], db)
    con = reader(db)
    assert con.execute("SELECT path, kind, severity FROM ingest_errors").fetchall() == [
        ("host_1234.1700000000000.pt.trace.json", "profiler", "error")]


def test_a_damaged_trace_cut_in_its_header_is_an_error_of_its_run(tmp_path):
    # cut inside the 20 KB metadata object: the head can never reach traceEvents; the file's name
    # says it is a trace, so it is read and its damage reported
    raw = gzip.decompress(METADATA_FIRST.read_bytes())
    folder = tmp_path / "log"
    folder.mkdir()
    (folder / "w.1.pt.trace.json.gz").write_bytes(gzip.compress(raw[:12000]))
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([folder], db)
    con = reader(db)
    assert con.execute("SELECT path, kind, severity FROM ingest_errors").fetchall() == [
        ("w.1.pt.trace.json.gz", "profiler", "error")]


def test_kineto_traces_of_other_producers_read_as_before():
    # Kineto's own order (schemaVersion, deviceProperties, distributedInfo, ..., traceEvents)
    for path in (HTA / "triton_example.json.gz", HTA / "rank0_one_step.json.gz",
                 FIXTURES / "profiler" / "mlp__infer__bf16__max_autotune.profile.json",
                 HTA / "call_stack" / "backward_thread.json"):
        assert classify(entry(Path(path)), sniff).kind == "profiler", path
