"""Counts the source never gave are NULL (unknown, no sample), never 0, in run_metrics and every reader.

- Killed runs (tests/fixtures/killed, SOURCES.md): neither wrote output code (no output_code.py, no
  inductor_output_code record in the trace), so their kernel counts are unknown; a run killed after
  one graph's code has that graph's count.
- A run of benchmark-harness CSVs alone (captures/harness-reformer.tar.xz's CSV: `graph_breaks` 11)
  has the harness's graph-break count and no recompile, failure or uncounted-break count; the whole
  capture (TORCH_TRACE and the CSV) counts its breaks from the trace, which agrees.
- A TORCH_TRACE log before 2.6 (tlparse's comp_metrics.log, a 2.4-era log, edited as other 2.3 to 2.5
  runs write it) cannot tell a data-dependent branch, which restarts nothing: its uncounted_breaks is
  NULL when frames that may resume after a break outnumber the breaks counted.
Each expected value is read from the files here, not from the code under test.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import tarfile
from pathlib import Path

from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

KILLED = FIXTURES / "killed"
HEALTHY = FIXTURES / "runs" / "cpu-torch2.13" / "transformer"
REFORMER = FIXTURES / "captures" / "harness-reformer.tar.xz"
LOG = FIXTURES / "torch_trace" / "eras" / "tlparse_2.3_comp_metrics.log"
BREAK = "'skip function graph_break in file /data/users/jjwu/a/pytorch/torch/_dynamo/decorators.py'"
# a C++ kernel of Inductor's CPU output code: `cpp_fused_x = async_compile.cpp_pybinding(...)`
CPP_KERNEL = re.compile(r"^\w+ = async_compile\.cpp(?:_pybinding)?\(", re.M)


def _metrics(db: str, names: set[str]) -> dict[str, dict]:
    """run_metrics by the folder of `names` each run's source path lies in."""
    with reader(db) as con:
        cur = con.execute("SELECT r.source_path AS src, m.* FROM run_metrics m JOIN runs r USING (run_id)")
        cols = [d[0] for d in cur.description]
        rows = [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
    return {next(p for p in Path(r["src"]).parts if p in names): r for r in rows}


def test_a_killed_run_counts_the_code_it_wrote_and_no_more(tmp_path):
    runs = tmp_path / "runs"
    for d in KILLED.iterdir():
        # what the files show: no output code, in the debug tree or the trace
        assert not list(d.rglob("output_code.py"))
        assert not any("inductor_output_code" in p.read_text() for p in (d / "trace").iterdir())
        assert json.loads((d / "manifest.json").read_text())["timed_out"] is True
        shutil.copytree(d, runs / d.name)
    # killed after the forward's code and before the backward's: the debug tree alone, one output_code.py
    partial = runs / "partial"
    shutil.copytree(HEALTHY, partial, ignore=shutil.ignore_patterns("trace"))
    [backward] = partial.rglob("model__0_backward_*/output_code.py")
    backward.unlink()
    manifest = json.loads((partial / "manifest.json").read_text())
    (partial / "manifest.json").write_text(json.dumps({**manifest, "timed_out": True, "exit_code": 124}))
    [forward] = partial.rglob("model__0_forward_*/output_code.py")
    wrote = len(CPP_KERNEL.findall(forward.read_text()))
    assert wrote == 4
    db = str(tmp_path / "w.duckdb")
    ingest_paths([runs], db)
    got = _metrics(db, {"transformer_killed_in_dynamo", "transformer_killed_in_inductor", "partial"})
    assert got["transformer_killed_in_dynamo"]["kernel_count"] is None
    assert got["transformer_killed_in_dynamo"]["extern_kernel_count"] is None
    assert got["transformer_killed_in_inductor"]["kernel_count"] is None
    assert got["transformer_killed_in_inductor"]["graphs"] == 1  # its graph folder, without code
    folder = next((KILLED / "transformer_killed_in_inductor").rglob("model__0_forward_1.0"))
    assert (folder / "ir_post_fusion.txt").exists() and not (folder / "output_code.py").exists()
    with reader(db) as con:
        [(why,)] = con.execute("SELECT g.unknown_because FROM graphs g JOIN runs r USING (run_id) "
                               "WHERE r.source_path LIKE '%transformer_killed_in_inductor'").fetchall()
    assert why is not None and "output_code.py" in why and "kernels unknown" in why  # the unknown says why
    assert got["partial"]["kernel_count"] == wrote
    with reader(db) as con:
        listed = dict(con.execute("SELECT split_part(r.source_path, '/', -1), l.kernels FROM run_listing l "
                                  "JOIN runs r USING (run_id)").fetchall())
    assert listed == {"transformer_killed_in_dynamo": None, "transformer_killed_in_inductor": None, "partial": wrote}


def _reformer(tmp_path: Path) -> tuple[Path, int]:
    with tarfile.open(REFORMER) as tar:
        tar.extractall(tmp_path / "cap", filter="data")
    [capture] = (tmp_path / "cap").glob("cpu-torch2.13/accuracy/Reformer")
    [path] = capture.glob("*_accuracy.csv")
    with path.open() as f:
        rows = [r for r in csv.DictReader(f) if r.get("name")]
    return capture, sum(int(r["graph_breaks"]) for r in rows)


def test_a_run_of_harness_csvs_alone_has_the_harness_count(tmp_path):
    capture, breaks = _reformer(tmp_path)
    assert breaks == 11
    alone = tmp_path / "ci" / "alone"
    alone.mkdir(parents=True)
    for f in capture.glob("*_accuracy.*"):  # the CSV and its JSON records, what a CI job uploads
        shutil.copy(f, alone / f.name)
    shutil.copytree(capture, tmp_path / "captured" / "whole")
    db = str(tmp_path / "w.duckdb")
    ingest_paths([alone], db)  # two ingests: one job's harness files join every run of its job
    ingest_paths([tmp_path / "captured" / "whole"], db)
    got = _metrics(db, {"alone", "whole"})
    assert got["alone"]["graph_breaks"] == breaks
    assert {k: got["alone"][k] for k in ("recompiles", "uncounted_breaks", "failures", "fallbacks", "restarts",
                                         "graphs", "kernel_count")} == dict.fromkeys(
        ("recompiles", "uncounted_breaks", "failures", "fallbacks", "restarts", "graphs", "kernel_count"))
    # the capture's trace has a record per break: the artifacts win, and they say what the harness says
    with reader(db) as con:
        rows = con.execute("SELECT count(*) FROM compile_events JOIN runs USING (run_id) "
                           "WHERE kind = 'graph_break' AND source_path LIKE '%/whole%'").fetchone()[0]
    assert got["whole"]["graph_breaks"] == rows == breaks
    assert got["whole"]["recompiles"] is not None


def _ingest_logs(tmp_path: Path, logs: dict[str, str]) -> dict[str, dict]:
    for name, text in logs.items():
        (tmp_path / "logs" / name).mkdir(parents=True)
        (tmp_path / "logs" / name / "dedicated_log_torch_trace_x.log").write_text(text)
    db = str(tmp_path / "wh.duckdb")
    assert ingest_paths([tmp_path / "logs"], db).errors == 0
    with reader(db) as con:
        cur = con.execute("SELECT regexp_extract(source_path, '/logs/([^/]+)/', 1), graph_breaks, uncounted_breaks "
                          "FROM run_metrics JOIN runs USING (run_id)")
        return {name: {"graph_breaks": gb, "uncounted_breaks": ub} for name, gb, ub in cur.fetchall()}, db


def _branch_instead_of_break(text: str) -> str:
    """The log as 2.4/2.5 write a data-dependent branch where fn's first break was: the frame compiles
    once (no restart, no reason: jump_graph_break raises nothing) and still resumes in a frame of its own."""
    lines = text.splitlines(keepends=True)
    out = []
    for line in lines:
        if '"frame_id": 0, "frame_compile_id": 0, "attempt": 1' in line:
            line = line.replace('"attempt": 1', '"attempt": 0')
        if '"co_name": "fn"' in line:
            line = line.replace(f'"restart_reasons": ["{BREAK}"]', '"restart_reasons": []')
        out.append(line)
    return "".join(out)


def test_uncounted_breaks_of_a_log_before_2_6_are_unknown_where_it_cannot_tell(tmp_path):
    text = LOG.read_text()
    co_names = re.findall(r'"co_name": "([^"]+)"', text)
    resumes = {n for n in co_names if n.startswith("torch_dynamo_resume_in_")}
    reasons = re.findall(r'"restart_reasons": \[([^\]]*)\]', text)
    counted = sum(r.count(BREAK) for r in reasons)
    assert (len(resumes), counted) == (2, 2)  # each resume frame has its counted break
    branch = _branch_instead_of_break(text)
    assert branch.count(BREAK) == text.count(BREAK) - 1 and '"frame_id": 0, "frame_compile_id": 0, "attempt": 1' not in branch
    # the restart that may be a STORE_ATTR break or an instruction Dynamo could not resume from
    ambiguous = text.replace(BREAK, "Unknown fail_and_restart_analysis", 1)
    lines = text.splitlines(keepends=True)
    second = [i for i, line in enumerate(lines) if '{"dynamo_start": ' in line][1]
    single = "".join(lines[:second])  # the log up to the resume frame's start: one frame, one break
    assert single.count('"co_name": "') == 1 and single.count(BREAK) == 1
    got, db = _ingest_logs(tmp_path, {"two": text, "branch": branch, "ambiguous": ambiguous, "single": single})
    assert got["two"] == {"graph_breaks": 2, "uncounted_breaks": 0}
    assert got["branch"] == {"graph_breaks": 1, "uncounted_breaks": None}  # 2 resume frames, 1 break counted
    assert got["ambiguous"] == {"graph_breaks": None, "uncounted_breaks": None}
    assert got["single"] == {"graph_breaks": 1, "uncounted_breaks": 0}
    with reader(db) as con:
        why = con.execute("SELECT reason FROM compile_events JOIN runs USING (run_id) "
                          "WHERE kind = 'unknown_uncounted' AND source_path LIKE '%/branch/%'").fetchall()
    assert len(why) == 1 and "2 frames that may resume" in why[0][0]


def test_the_gate_gives_an_unknown_head_no_verdict_either_way(tmp_path):
    """`iwh compare --fail-on regression`: a head whose uncounted breaks are unknown against a base that
    counts them is n/a ('head unknown'), neither a regression (exit 0) nor an improvement; the other
    way round alike."""
    text = LOG.read_text()
    for side, body in (("base", text), ("head", _branch_instead_of_break(text))):
        (tmp_path / side).mkdir()
        (tmp_path / side / "comp_metrics.log").write_text(body)  # one model: the log's name
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([tmp_path / "base", tmp_path / "head"], db)
    with reader(db) as con:
        ids = dict(con.execute("SELECT regexp_extract(source_path, '(base|head)/', 1), run_id FROM runs").fetchall())
        counts = dict(con.execute("SELECT run_id, uncounted_breaks FROM run_metrics").fetchall())
    assert counts[ids["base"]] == 0 and counts[ids["head"]] is None
    for base, head, unknown in ((ids["base"], ids["head"], "head"), (ids["head"], ids["base"], "base")):
        res = CliRunner().invoke(cli, ["compare", "--base", base, "--head", head, "--db", db, "--format", "json",
                                       "--fail-on", "regression", "--threshold", "graph_breaks=off"])
        [pair] = json.loads(res.stdout)["pairs"]
        judged = pair["metrics"]["uncounted_breaks"]
        assert (judged["verdict"], judged["how"]) == ("n/a", f"{unknown} unknown")
        assert judged[unknown] is None and judged["base" if unknown == "head" else "head"] == 0
        assert res.exit_code == 0, res.stdout


def test_a_change_point_skips_an_unknown_count(tmp_path):
    """`iwh changes`: a killed run between two healthy ones of one workload makes no change point of
    its unknown kernel count, and the run after it is judged against the run before it."""
    from inductor_warehouse.analysis.changes import changes

    runs = tmp_path / "runs"
    for name, src in (("a", HEALTHY), ("b", KILLED / "transformer_killed_in_inductor"), ("c", HEALTHY)):
        shutil.copytree(src, runs / name)
    stamps = {"a": "2026-11-22T00:00:00+00:00", "b": "2026-11-23T00:00:00+00:00", "c": "2026-11-24T00:00:00+00:00"}
    for name, at in stamps.items():
        m = json.loads((runs / name / "manifest.json").read_text())
        (runs / name / "manifest.json").write_text(json.dumps({**m, "started_at": at, "nightly": at[:10]}))
    db = str(tmp_path / "w.duckdb")
    ingest_paths([runs], db)
    with reader(db) as con:
        report = changes(con, "transformer", series_label="nightly", metrics=("kernels", "extern_kernels", "graph_breaks"))
    assert [len(rs) for rs in report.series.values()] == [3]
    assert report.points == []  # a -> b is no sample, b -> c is a -> c: the same counts


def test_a_warehouse_written_before_0045_says_ingest_again(tmp_path):
    """Migration 0045: a pre-2.6 run with more resume frames than breaks counted, ingested before (no
    unknown_uncounted row, uncounted 0), gets its uncounted breaks unknown and a row saying to ingest it
    again; a run whose resume frames its breaks explain keeps its 0; every rollup is made again."""
    import duckdb

    text = LOG.read_text()
    got, db = _ingest_logs(tmp_path, {"two": text, "branch": _branch_instead_of_break(text)})
    with duckdb.connect(db) as con:  # as written before 0045
        con.execute("DELETE FROM compile_events WHERE kind = 'unknown_uncounted'")
        con.execute("UPDATE run_rollups SET uncounted_breaks = 0, kernel_count = 99")
        con.execute("DELETE FROM _migrations WHERE name = '0045_unknown_counts'")
    ingest_paths([], db)  # the loader's writer: migrates, and makes the rollups again
    with reader(db) as con:
        after = dict(con.execute("SELECT regexp_extract(source_path, '/logs/([^/]+)/', 1), uncounted_breaks "
                                 "FROM run_metrics JOIN runs USING (run_id)").fetchall())
        why = con.execute("SELECT reason FROM compile_events WHERE kind = 'unknown_uncounted'").fetchall()
        kernels = con.execute("SELECT list(kernel_count) FROM run_rollups").fetchone()[0]
    assert after == {"two": 0, "branch": None}
    assert len(why) == 1 and "ingest the log again" in why[0][0]
    # the eager backend's log: no Inductor compiled its graphs, so no kernel count applies
    assert "inductor_output_code" not in text
    assert kernels == [None, None]  # the rollups were made again (not the 99 written above)


def _breaks_once_a_model(files: list[Path]) -> int:
    """HUD's reading of CI's CSVs, by hand: a model's graph breaks are its last accuracy row's,
    else its last performance row's (a model run several times is one workload, not several)."""
    last: dict[str, dict[str, int]] = {"accuracy": {}, "performance": {}}
    for path in files:
        kind = "accuracy" if path.stem.endswith("accuracy") else "performance"
        with path.open() as f:
            for r in csv.DictReader(f):
                if r.get("name") and r.get("graph_breaks"):
                    last[kind][r["name"]] = int(r["graph_breaks"])
    return sum({**last["performance"], **last["accuracy"]}.values())


def test_a_harness_runs_breaks_count_each_model_once(tmp_path):
    """CI writes an accuracy and a performance row for a model, and a model run again writes its row
    again: both give the model's count once, as harness_models_of does (migration 0048)."""
    real = FIXTURES / "harness" / "real"
    cases = {"both_kinds": real / "davidberard98-dynamo_benchmark_results" / "day_103_13_04_23_performance_float32_531",
             "repeated": real / "pytorch-15a7c584"}
    for name, folder in cases.items():
        shutil.copytree(folder, tmp_path / "ci" / name)
    db = str(tmp_path / "w.duckdb")
    ingest_paths([tmp_path / "ci"], db)
    with reader(db) as con:
        got = dict(con.execute("SELECT regexp_extract(source_path, '/ci/([^/]+)', 1), graph_breaks "
                               "FROM run_metrics JOIN runs USING (run_id)").fetchall())
    for name, folder in cases.items():
        files = sorted(folder.glob("*.csv"))
        rows = sum(int(r["graph_breaks"]) for p in files for r in csv.DictReader(p.open()) if r.get("graph_breaks"))
        assert got[name] == _breaks_once_a_model(files) < rows, (name, got[name], rows)
