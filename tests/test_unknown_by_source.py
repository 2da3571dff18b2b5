"""Which files of a run tell its compile events, and NULL (unknown) where none does.

A graph break, a recompile, a restart or a failed compile is told by a TORCH_TRACE log (recompiles
from 2.5, whose `recompile_reasons` artifact names each), by TORCH_LOGS text where its logger was on
(graph breaks, recompiles; never restarts or failures), or by benchmark-harness CSVs (graph breaks);
a profile, a TORCH_COMPILE_DEBUG tree or torch-spyre files tell none of them. The runs are the
old-release captures (tests/fixtures/captures/cpu-torch2.3-2.7-old-releases.tar.xz, SOURCES.md),
each cut down to some of its files; the counts are checked against torch's in-process counters
(ground_truth.json) and against the files read here with a substring or two.
"""

from __future__ import annotations

import json
import shutil
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

ARCHIVE = FIXTURES / "captures" / "cpu-torch2.3-2.7-old-releases.tar.xz"
PROFILE = FIXTURES / "profiler" / "mlp__infer__bf16__max_autotune.profile.json"
EVENTS = ("graph_breaks", "uncounted_breaks", "recompiles", "restarts", "failures", "fallbacks")


def _drop(*names: str) -> Callable[[Path], None]:
    def cut(run: Path) -> None:
        for n in names:
            p = run / n
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    return cut


CUTS = {
    "whole": _drop(),
    "trace_only": _drop("torch_compile_debug", "torch_logs.txt", "manifest.json"),
    "logs_only": _drop("torch_compile_debug", "trace", "manifest.json"),
    "logs_and_manifest": _drop("torch_compile_debug", "trace"),
    "debug_tree_only": _drop("trace", "torch_logs.txt", "manifest.json"),
}


@pytest.fixture(scope="module")
def cut_runs(tmp_path_factory):
    """{(release, workload, cut): run_metrics row, plus the cut folder as `folder`}."""
    root = tmp_path_factory.mktemp("unknown-by-source")
    with tarfile.open(ARCHIVE) as tf:
        tf.extractall(root / "x", filter="data")
    folders = {}
    for version in ("2.4.1", "2.5.1"):
        for workload in ("gbreak_dyn", "cnn_train"):
            src = root / "x" / f"cpu-torch{version}" / workload
            for name, cut in CUTS.items():
                d = root / version / workload / name
                shutil.copytree(src, d)
                cut(d)
                folders[(version, workload, name)] = d
    (root / "profile").mkdir()
    shutil.copy(PROFILE, root / "profile" / PROFILE.name)
    found = {}
    # a cut a warehouse each: the files of one process are one run id, kept once a warehouse
    for name in CUTS:
        db = str(root / f"{name}.duckdb")
        mine = {k: d for k, d in folders.items() if k[2] == name}
        ingest_paths([*mine.values(), *([root / "profile"] if name == "whole" else [])], db)
        rows = _rows(db)
        for key, d in mine.items():
            found[key] = {**next(r for r in rows if Path(r["src"]).is_relative_to(d)), "folder": d}
        if name == "whole":
            found["profile"] = next({**r, "folder": root / "profile"} for r in rows if "profile" in Path(r["src"]).parts)
    return found


def _rows(db: str) -> list[dict]:
    with reader(db) as con:
        cur = con.execute("SELECT r.source_path AS src, m.* FROM run_metrics m JOIN runs r USING (run_id)")
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def _truth(run: Path) -> dict:
    return json.loads((run / "ground_truth.json").read_text())


def _recompile_lines(run: Path) -> int:
    return (run / "torch_logs.txt").read_text().count("Recompiling function")


def test_a_profile_or_a_debug_tree_alone_tells_no_compile_event(cut_runs):
    for key in [("2.4.1", "gbreak_dyn", "debug_tree_only"), ("2.5.1", "cnn_train", "debug_tree_only"), "profile"]:
        row = cut_runs[key]
        assert row["graphs"] is None or row["graphs"] > 0, key
        assert {e: row[e] for e in EVENTS} == dict.fromkeys(EVENTS), key


def test_logs_with_no_line_of_a_logger_tell_nothing_of_it(cut_runs):
    """cnn_train broke and recompiled nowhere (Dynamo's counters): its log has no line of either
    logger, which reads as a log of a run that did not log them, so the counts are unknown."""
    row = cut_runs[("2.5.1", "cnn_train", "logs_only")]
    text = (row["folder"] / "torch_logs.txt").read_text()
    assert "[__graph_breaks]" not in text and "[__recompiles" not in text
    assert "graph_break" not in _truth(row["folder"])["counters"]
    assert {e: row[e] for e in EVENTS} == dict.fromkeys(EVENTS)


def test_iwh_capture_s_logs_tell_breaks_and_recompiles_not_restarts(cut_runs):
    """`iwh capture` always turns the graph_breaks and recompiles loggers on: beside its manifest, a
    log without their lines says 0 of each; restarts and failures it never logs."""
    for version in ("2.4.1", "2.5.1"):
        row = cut_runs[(version, "cnn_train", "logs_and_manifest")]
        truth = _truth(row["folder"])
        assert "command" in json.loads((row["folder"] / "manifest.json").read_text())
        assert row["graph_breaks"] == sum(truth["counters"].get("graph_break", {}).values()) == 0
        assert row["recompiles"] == _recompile_lines(row["folder"]) == 0
        assert (row["restarts"], row["failures"], row["fallbacks"]) == (None, None, None)
        gb = cut_runs[(version, "gbreak_dyn", "logs_and_manifest")]
        assert gb["recompiles"] == _recompile_lines(gb["folder"]) == 4
        assert gb["restarts"] is None
        # the log of a release before 2.6 logs no data-dependent branch
        assert gb["uncounted_breaks"] is None


def test_logs_whose_recompiles_logger_wrote_count_recompiles(cut_runs):
    row = cut_runs[("2.5.1", "gbreak_dyn", "logs_only")]
    assert row["recompiles"] == _recompile_lines(row["folder"]) == 4
    assert row["restarts"] is None and row["failures"] is None


def test_a_trace_before_2_5_cannot_count_recompiles_alone(cut_runs):
    """2.4 writes no recompile record: its trace alone leaves recompiles unknown; the TORCH_LOGS beside
    it count them. 2.5's trace counts them itself (a recompile_reasons artifact each)."""
    old = cut_runs[("2.4.1", "gbreak_dyn", "trace_only")]
    trace = next((old["folder"] / "trace").glob("*.log")).read_text()
    assert '"recompile_reasons"' not in trace
    assert old["recompiles"] is None
    assert old["graph_breaks"] == sum(_truth(old["folder"])["counters"]["graph_break"].values())
    assert old["restarts"] is not None and old["failures"] == 0
    whole = cut_runs[("2.4.1", "gbreak_dyn", "whole")]
    assert whole["recompiles"] == _recompile_lines(whole["folder"]) == 4
    new = cut_runs[("2.5.1", "gbreak_dyn", "trace_only")]
    trace = next((new["folder"] / "trace").glob("*.log")).read_text()
    assert new["recompiles"] == trace.count('"name": "recompile_reasons"') == 4



def test_a_warehouse_written_before_0049_learns_what_its_old_trace_cannot_tell(tmp_path):
    """Migration 0049: a 2.4 trace's run written before has no unknown_recompile; the migration adds it
    from the run's release, and the rollups made again give NULL where they gave 0."""
    import duckdb

    with tarfile.open(ARCHIVE) as tf:
        tf.extractall(tmp_path / "x", filter="data")
    run = tmp_path / "x" / "cpu-torch2.4.1" / "gbreak_dyn"
    _drop("torch_compile_debug", "torch_logs.txt")(run)  # the trace and the manifest (its release)
    db = str(tmp_path / "w.duckdb")
    ingest_paths([run], db)
    assert _rows(db)[0]["recompiles"] is None
    with duckdb.connect(db) as con:  # as written before 0049
        con.execute("DELETE FROM compile_events WHERE kind = 'unknown_recompile'")
        con.execute("UPDATE run_rollups SET recompiles = 0")
        con.execute("DELETE FROM _migrations WHERE name = '0049_unknown_by_source'")
    ingest_paths([], db)  # the loader's writer: migrates, and makes the rollups again
    assert _rows(db)[0]["recompiles"] is None


def _compile_time(row: dict) -> dict:
    with reader(str(row["folder"].parents[2] / "whole.duckdb")) as con:
        cur = con.execute("SELECT * FROM run_compile_time WHERE run_id = ?", [row["run_id"]])
        return dict(zip([d[0] for d in cur.description], cur.fetchone(), strict=True))


def test_a_2_4_training_run_s_compile_time_without_its_backward_is_unknown(cut_runs):
    """2.4 compiled cnn_train's backward (Dynamo's compile_times name bw_compiler) lazily, after the
    forward's compilation_metrics, and wrote no record of it: the total is unknown, Dynamo's own part
    stands. 2.5 writes the backward's record; 2.4's inference runs have no backward to miss."""
    old = cut_runs[("2.4.1", "cnn_train", "whole")]
    truth = _truth(old["folder"])["compile_times_str"]
    trace = next((old["folder"] / "trace").glob("*.log")).read_text()
    assert "bw_compiler" in truth and "bwd_compilation_metrics" not in trace
    assert trace.index('{"compilation_metrics"') < trace.rindex('{"inductor_output_code"')  # the backward after
    t = _compile_time(old)
    assert (t["total_s"], t["aot_s"], t["inductor_s"], t["code_gen_s"]) == (None, None, None, None)
    assert t["dynamo_s"] > 0
    new = cut_runs[("2.5.1", "cnn_train", "whole")]
    assert "bwd_compilation_metrics" in next((new["folder"] / "trace").glob("*.log")).read_text()
    assert _compile_time(new)["total_s"] > 0
    inference = _compile_time(cut_runs[("2.4.1", "gbreak_dyn", "whole")])
    assert inference["total_s"] == pytest.approx(sum(inference[k] for k in ("dynamo_s", "aot_s", "inductor_s", "code_gen_s")))
    assert inference["total_s"] > 0



def test_specializations_by_model_takes_recompiles_as_run_metrics_tells_them(tmp_path):
    """The dynamic-shapes query's recompiles are run_metrics' (one definition): for 2.7's gbreak_dyn
    the log's count of `Recompiling function` lines; for a run that cannot tell them, NULL, never a 0
    made of nothing (a 2.7 trace with its recompile records taken out stands for a release whose trace
    writes none)."""
    from inductor_warehouse.schema import queries as canned

    with tarfile.open(ARCHIVE) as tf:
        tf.extractall(tmp_path / "x", filter="data")
    run = tmp_path / "x" / "cpu-torch2.7.1" / "gbreak_dyn"
    db = str(tmp_path / "w.duckdb")
    ingest_paths([run], db)

    def recompiles() -> list:
        with reader(db) as con:
            cur = canned.run(con, "shapes/specializations_by_model", {"model": "gbreak_dyn"})
            cols = [d[0] for d in cur.description]
            return [dict(zip(cols, r, strict=True))["recompiles"] for r in cur.fetchall()]

    assert recompiles() == [_recompile_lines(run)] == [3]
    import duckdb

    with duckdb.connect(db) as con:
        con.execute("UPDATE run_rollups SET recompiles = NULL")
    assert recompiles() == [None]
