"""A TORCH_TRACE record no release has written yet is kept whole: its metadata, payload, compile id and
line come back from the warehouse once the log is gone, and a key beside a record's kind is kept too.
The records are the kinds hunt's (/work/hunt/kinds/tools/inject.py: a new kind with a JSON payload,
two unknown keys in one envelope, a global kind), put into a real torch 2.13 CPU log before its
compilation_metrics as the hunt did."""

from __future__ import annotations

import hashlib
import json

from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

LOG = FIXTURES / "kinds_2.13" / "fullgraph" / "dedicated_log_torch_trace_fullgraph.log"
PREFIX = "V1128 02:01:50.000000 31500 torch/_future/thing.py:1] "
FRAME = {"frame_id": 1, "frame_compile_id": 0, "attempt": 0}  # the log's compile 1/0


def _record(envelope: dict, payload: str | None = None) -> list[str]:
    if payload is not None:
        envelope = {**envelope, "has_payload": hashlib.md5(payload.encode()).hexdigest()}
    return [PREFIX + json.dumps(envelope)] + ([] if payload is None else ["\t" + p for p in payload.split("\n")])


def _inject(tmp_path, records: list[list[str]]) -> tuple[str, list[int]]:
    """The log with the records put before its compilation_metrics; the line number of each."""
    lines = LOG.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '{"compilation_metrics"' in line)
    starts, new = [], lines[:at]
    for r in records:
        starts.append(len(new) + 1)
        new += r
    (tmp_path / "trace").mkdir()
    (tmp_path / "trace" / "dedicated_log_torch_trace_future.log").write_text("\n".join(new + lines[at:]) + "\n")
    return str(tmp_path / "trace"), starts


def _sql(db: str, query: str) -> list[dict]:
    res = CliRunner().invoke(cli, ["--db", db, "sql", query, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_an_unknown_record_kind_is_kept_whole_and_read_back_byte_for_byte(tmp_path):
    payload = '{"k": [1, 2, 3]}\n  second line\twith a tab\n'
    where, (line, global_line) = _inject(tmp_path, [
        _record({"future_record": {"what": "x", "n": 3}, **FRAME}, payload),
        _record({"future_global": {"x": 1}}, "hello\nworld"),
    ])
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([where], db)
    assert s.errors == 0
    assert s.unknown_records() == {"future_record": 1, "future_global": 1}
    rows = _sql(db, "SELECT record_kind, n, line, compile_id, metadata, payload, has_payload, "
                    "md5(payload) = has_payload AS same FROM trace_records WHERE handling = 'unknown' ORDER BY line")
    assert [(r["record_kind"], r["n"], r["line"], r["compile_id"]) for r in rows] == [
        ("future_record", 1, line, "1/0"), ("future_global", 1, global_line, None)]
    assert json.loads(rows[0]["metadata"]) == {"what": "x", "n": 3}
    assert rows[0]["payload"] == payload and rows[0]["same"] is True
    assert rows[0]["has_payload"] == hashlib.md5(payload.encode()).hexdigest()
    assert rows[1]["payload"] == "hello\nworld" and rows[1]["same"] is True
    # the known records are counted as before, one row a kind and name
    known = reader(db).execute("SELECT record_kind, name, n FROM trace_records WHERE handling <> 'unknown' "
                               "ORDER BY ALL").fetchall()
    assert known == [("artifact", "dynamo_error", 1), ("artifact", "torch_version", 1),
                     ("compilation_metrics", None, 1), ("dynamo_start", None, 1)]
    out = CliRunner().invoke(cli, ["--db", db, "query", "ingest/unknown_records", "--format", "csv"]).output
    assert {line.split(",")[0]: line.split(",")[2] for line in out.splitlines()[1:]} == {
        "future_record": "1", "future_global": "1"}


def test_two_unknown_keys_in_one_envelope_are_both_kept(tmp_path):
    where, (line,) = _inject(tmp_path, [_record({"future_a": {}, "future_b": {"y": 2}, **FRAME})])
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([where], db)
    assert s.errors == 0 and s.unknown_records() == {"future_a": 1, "future_b": 1}
    rows = reader(db).execute("SELECT record_kind, line, compile_id, metadata, payload FROM trace_records "
                              "WHERE handling = 'unknown' ORDER BY record_kind").fetchall()
    assert [(k, n, c, json.loads(m), p) for k, n, c, m, p in rows] == [
        ("future_a", line, "1/0", {}, ""), ("future_b", line, "1/0", {"y": 2}, None)]


def test_a_new_key_beside_a_known_kind_is_kept_and_the_record_still_read(tmp_path):
    """The hunt's `envkey`: a field no release writes next to a known artifact's context."""
    where, (line,) = _inject(tmp_path, [_record({"artifact": {"name": "fx_graph_runnable", "encoding": "string"},
                                                  **FRAME, "future_envelope_field": "abc"}, "print(1)")])
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([where], db)
    assert s.errors == 0 and s.unknown_records() == {"future_envelope_field": 1}
    assert reader(db).execute("SELECT record_kind, line, metadata FROM trace_records WHERE handling = 'unknown'"
                              ).fetchall() == [("future_envelope_field", line, '"abc"')]
    assert reader(db).execute("SELECT n FROM trace_records WHERE name = 'fx_graph_runnable'").fetchall() == [(1,)]
