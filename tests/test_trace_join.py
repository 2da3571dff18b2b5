"""A trace log and the debug tree of the same process are one run; a trace alone still gives kernels."""

from __future__ import annotations

import shutil

import pytest

from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import reader, FIXTURES, corpus_path

RUNS = FIXTURES / "runs"


def _graphs(db: str) -> dict:
    con = reader(db)
    rows = con.execute("SELECT graph_id, compile_id, kernel_count, extern_kernel_count, source FROM graphs").fetchall()
    con.close()
    return {g: (c, k, e, s) for g, c, k, e, s in rows}


@pytest.mark.parametrize("run", ["cpu-torch2.13/transformer", "gpu-torch2.11/mlp__train__fp32__default"])
def test_trace_only_run_has_the_debug_tree_kernel_counts(tmp_path, run):
    full, trace_only = str(tmp_path / "full.duckdb"), str(tmp_path / "trace.duckdb")
    ingest_paths([RUNS / run], full)
    shutil.copytree(RUNS / run / "trace", tmp_path / "alone" / "trace")
    ingest_paths([tmp_path / "alone"], trace_only)
    with_tree, alone = _graphs(full), _graphs(trace_only)
    assert {g: v[:3] for g, v in with_tree.items()} == {g: v[:3] for g, v in alone.items()}
    assert {v[3] for v in with_tree.values()} == {"debug_tree"}
    assert {v[3] for v in alone.values()} == {"torch_trace"}
    assert all(v[0] for v in with_tree.values())  # every debug-tree graph got its compile id from the trace


def test_one_run_per_process_when_tree_and_log_sit_side_by_side(tmp_path):
    db = str(tmp_path / "wh.duckdb")
    src = RUNS / "cpu-torch2.13" / "transformer"
    # no manifest: the pid in the debug folder name and in the log's records join them
    shutil.copytree(src / "torch_compile_debug", tmp_path / "x" / "torch_compile_debug")
    shutil.copytree(src / "trace", tmp_path / "x" / "trace")
    s = ingest_paths([tmp_path / "x"], db)
    con = reader(db)
    assert s.runs == 1
    (n_compilations,) = con.execute("SELECT count(*) FROM compilations").fetchone()
    log = next((src / "trace").glob("*.log")).read_text()
    assert n_compilations == log.count('{"compilation_metrics"') + log.count('{"bwd_compilation_metrics"')
    assert con.execute("SELECT model FROM runs").fetchone()[0] == "x"


@pytest.mark.corpus
def test_every_tlparse_log_ingests_and_the_corrupt_one_keeps_its_good_records(tmp_path):
    logs = corpus_path("tlparse-logs")
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([logs], db)
    con = reader(db)
    n_logs = len(list(logs.rglob("*.log")))
    assert s.runs == n_logs
    ranks = con.execute(
        "SELECT rank, labels->>'job' FROM runs WHERE rank IS NOT NULL ORDER BY rank").fetchall()
    assert ranks == [(r, "multi_rank_logs") for r in range(4)]
    errs = con.execute("SELECT path, line FROM ingest_errors").fetchall()
    assert {p for p, _ in errs} == {"simple_corrupted_json.log"}
    good, bad = (logs / "simple.log").read_text(), (logs / "simple_corrupted_json.log").read_text()
    # the corrupted log differs from simple.log by one record: everything else is kept
    counts = dict(con.execute(
        "SELECT r.model, count(*) FROM compilations c JOIN runs r USING (run_id) GROUP BY ALL").fetchall())
    assert counts["simple_corrupted_json"] == bad.count('{"compilation_metrics"') == good.count('{"compilation_metrics"')


def test_the_trace_does_not_repeat_what_the_debug_tree_gave(tmp_path):
    """Output code, post-grad graphs and node mappings of debug-tree graphs are in the log too:
    read once, they give no second copy of any lineage, kernel or op row."""
    db = str(tmp_path / "wh.duckdb")
    run = RUNS / "cpu-torch2.13" / "transformer"
    ingest_paths([run], db)
    con = reader(db)
    rows, distinct = con.execute(
        "SELECT count(*), count(DISTINCT (graph_id, source_node, post_grad_node, kernel_name)) "
        "FROM lineage WHERE source = 'provenance'").fetchone()
    assert rows == distinct > 0
    dup_kernels = con.execute(
        "SELECT count(*) FROM (SELECT graph_id, kernel_name, site, generated FROM kernels "
        "GROUP BY ALL HAVING count(*) > 1)").fetchone()[0]
    assert dup_kernels == 0
    con.close()
