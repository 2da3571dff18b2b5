"""Two facts of 2.5 logs other projects committed (hunt trace2, D2 and D3):
- a hard compile failure (BackendCompilerFailed) of a release that does not write
  `config_suppress_errors` (before 2.6) has an unknown fallback: convert_frame re-raises it unless
  errors were suppressed, and the log does not say whether they were; the run's fallbacks is NULL;
- a compile that restarted and then failed is a restart: restarts are Dynamo's attempt numbers (the
  envelope's `attempt`), though Dynamo drops a failed compile's restart reasons."""

from __future__ import annotations

import gzip
import json
import re

from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

TT = FIXTURES / "torch_trace"
EB = TT / "EdoardoBotta__RQ-VAE-Recommender" / "dedicated_log_torch_trace_raw_two_failures.log.gz"
VK = TT / "Vinayak-Kannan__grafana-compile-break-dashboard" / "dedicated_log_torch_trace_1m5z7pob_35_0.log"
_ENVELOPE = re.compile(r"^[VIWEC]\d{4} [\d:.]+ \d+ \S+\] (\{.*\})$")


def _metrics(path):
    """(envelope attempt, compilation_metrics) of each frame compile, read with a regex and json."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        envelopes = [json.loads(m.group(1)) for line in f if (m := _ENVELOPE.match(line))]
    return [(e.get("attempt", 0), e["compilation_metrics"]) for e in envelopes if "compilation_metrics" in e]


def _ingest(tmp_path, path):
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([path], db)
    con = reader(db)
    try:
        metrics = con.execute("SELECT failures, fallbacks, restarts FROM run_metrics").fetchone()
        events = con.execute("SELECT compile_id, kind, fallback, reason FROM compile_events "
                             "WHERE kind IN ('failure', 'restart') ORDER BY ALL").fetchall()
        errors = con.execute("SELECT count(*) FROM ingest_errors").fetchone()[0]
    finally:
        con.close()
    return metrics, events, errors


def test_a_hard_failure_before_2_6_has_an_unknown_fallback(tmp_path):
    records = _metrics(EB)
    failed = [m for _, m in records if m.get("fail_type")]
    assert [m["fail_type"] for m in failed] == ["BackendCompilerFailed"] * 2
    assert not any("config_suppress_errors" in m for _, m in records)  # 2.5 does not write it
    (failures, fallbacks, _), events, errors = _ingest(tmp_path, EB)
    assert (failures, fallbacks, errors) == (len(failed), None, 0)
    assert [(c, f) for c, k, f, _ in events if k == "failure"] == [(m["compile_id"], None) for m in failed]


def test_a_compile_that_restarted_then_failed_is_a_restart(tmp_path):
    records = _metrics(EB)
    # 0/0 restarted at a graph break and finished; 1/0 restarted, then failed, its reasons dropped
    assert [(m["compile_id"], a, m["restart_reasons"], m["fail_type"]) for a, m in records] == [
        ("0/0", 1, [records[0][1]["restart_reasons"][0]], None), ("1/0", 1, [], "BackendCompilerFailed"),
        ("2/0", 0, [], "BackendCompilerFailed")]
    (_, _, restarts), events, _ = _ingest(tmp_path, EB)
    assert restarts == sum(a for a, _ in records) == 2
    assert [(c, r) for c, k, _, r in events if k == "restart"] == [
        ("0/0", records[0][1]["restart_reasons"][0]), ("1/0", None)]


def test_a_soft_failure_after_a_restart_counts_both(tmp_path):
    ((attempt, m),) = _metrics(VK)
    assert (m["compile_id"], attempt, m["restart_reasons"], m["fail_type"]) == ("35/0", 1, [], "Unsupported")
    # Unsupported is a soft failure: the frame ran eagerly whatever the flag
    assert _ingest(tmp_path, VK) == ((1, 1, 1), [("35/0", "failure", True, f"Unsupported: {m['fail_reason']}"),
                                                 ("35/0", "restart", None, None)], 0)


def test_a_warehouse_written_before_0053_forgets_the_fallbacks_it_could_not_know(tmp_path):
    """Migration 0053: failures stored as "did not fall back" from a log that does not say whether
    errors were suppressed become unknown, and the rollups made again give NULL where they gave 0."""
    import duckdb

    db = str(tmp_path / "w.duckdb")
    ingest_paths([EB], db)
    with duckdb.connect(db) as con:  # as written before 0053
        con.execute("UPDATE compile_events SET fallback = false WHERE kind = 'failure'")
        con.execute("UPDATE run_rollups SET fallbacks = 0")
        con.execute("DELETE FROM _migrations WHERE name = '0053_unknown_fallbacks'")
    ingest_paths([], db)  # the loader's writer: migrates, and makes the rollups again
    con = reader(db)
    try:
        assert con.execute("SELECT fallbacks FROM run_metrics").fetchall() == [(None,)]
        assert con.execute("SELECT DISTINCT fallback FROM compile_events WHERE kind = 'failure'").fetchall() == [(None,)]
    finally:
        con.close()


def test_the_graph_breaks_page_says_the_fallbacks_are_not_known(tmp_path, monkeypatch):
    from tests.test_dashboards import open_page, texts

    db = str(tmp_path / "wh.duckdb")
    ingest_paths([EB], db)
    at = open_page(db, "graph_breaks", monkeypatch)
    failed = sum(1 for _, m in _metrics(EB) if m.get("fail_type"))
    assert (f"0 of the frames then ran eagerly ({failed} not known: the log does not say whether errors were "
            "suppressed)") in texts(at)
