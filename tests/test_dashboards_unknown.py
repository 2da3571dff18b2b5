"""Pages on values no file of a run gives (NULL, unknown): never drawn as 0 or as a part for the
whole, and said in words.

The runs are the old-release captures (tests/fixtures/captures/cpu-torch2.3-2.7-old-releases.tar.xz,
SOURCES.md: torch 2.3.1, 2.4.1, 2.5.1, 2.7.1 on CPU, three workloads each) and HTA's trace_filter
profiles of ranks 0 and 1 (a run each). What is expected is read from the captured files here: a
trace log's `compilation_metrics` records, its manifest's mode and release.
"""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from inductor_warehouse.analysis.canned_rows import run_query
from inductor_warehouse.dashboards import unknowns
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.schema.reference import unknown_when
from tests.conftest import FIXTURES, reader
from tests.test_dashboards import APP, con_rows, texts, with_copy

ARCHIVE = FIXTURES / "captures" / "cpu-torch2.3-2.7-old-releases.tar.xz"
RANKS = FIXTURES / "profiler" / "facebookresearch__HolisticTraceAnalysis" / "trace_filter"
# a trace record: the glog header, then its JSON; the forward's (frame's) record and the backward's
RECORD = re.compile(r'^\S+ \S+ \d+ \S+\] (\{"(?:bwd_)?compilation_metrics".*)$', re.M)


@pytest.fixture(scope="module")
def old(tmp_path_factory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("unknown")
    with tarfile.open(ARCHIVE) as tf:
        tf.extractall(root, filter="data")
    db = str(root / "wh.duckdb")
    summary = ingest_paths([*sorted(root.glob("cpu-torch*")), RANKS], db)
    assert summary.runs == 14 and summary.errors == 0, summary.line()
    return root, with_copy(db)


def captured(root: Path) -> dict[tuple[str, str], dict]:
    """Each captured run by (release, workload): its manifest's torch and mode, and the
    compilation_metrics (`records`) and bwd_compilation_metrics (`bwd`) records of its trace log."""
    out = {}
    for run in sorted(root.glob("cpu-torch*/*")):
        manifest = json.loads((run / "manifest.json").read_text())
        found = [json.loads(m) for log in (run / "trace").glob("*.log") for m in RECORD.findall(log.read_text())]
        out[(run.parent.name.removeprefix("cpu-torch"), run.name)] = {
            "torch": manifest["torch"], "mode": manifest.get("mode"),
            "records": [r["compilation_metrics"] for r in found if "compilation_metrics" in r],
            "bwd": [r["bwd_compilation_metrics"] for r in found if "bwd_compilation_metrics" in r]}
    return out


def open_page(db: str, page: str, monkeypatch, compilers=(), **params) -> AppTest:
    monkeypatch.setenv("IWH_DB", db)
    at = AppTest.from_file(str(APP), default_timeout=120)
    if compilers:
        at.session_state["filter_compilers"] = list(compilers)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    at.switch_page(f"sections/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def chart_rows(chart) -> list[dict]:
    """The rows a Vega-Lite chart draws: its named datasets (Altair's) or its data."""
    tables = [d.data.data for d in chart.proto.datasets] or [chart.proto.data.data]
    return [r for t in tables for r in pa.ipc.open_stream(t).read_all().to_pylist()]


def test_compile_time_draws_no_bar_for_an_unknown_total(old, monkeypatch):
    root, db = old
    runs = captured(root)
    # the files: 2.3's traces write no compilation_metrics; 2.4.1's cnn_train trained, yet its trace holds
    # the forward's record alone, where 2.5.1's has a bwd_compilation_metrics record beside it
    assert all(not r["records"] for (v, _), r in runs.items() if v == "2.3.1")
    assert runs[("2.4.1", "cnn_train")]["mode"] == "train"
    assert len(runs[("2.4.1", "cnn_train")]["records"]) == 1 and not runs[("2.4.1", "cnn_train")]["bwd"]
    assert len(runs[("2.5.1", "cnn_train")]["bwd"]) == 1
    compilers = [runs[(v, "cnn_train")]["torch"] for v in ("2.3.1", "2.4.1", "2.5.1")]
    at = open_page(db, "compile_time", monkeypatch, compilers=compilers)
    trained_24 = f"cnn_train · cpu · train · {compilers[1]}"
    [chart] = at.get("vega_lite_chart")
    barred = {r["group"] for r in chart_rows(chart)}
    assert trained_24 not in barred and f"cnn_train · cpu · train · {compilers[2]}" in barred
    table = at.dataframe[0].value
    row = table[table["group"] == trained_24].iloc[0]
    assert row["total_s"] == "unknown"
    forward = runs[("2.4.1", "cnn_train")]["records"][0]  # Dynamo's part: the frame's time outside the backend
    dynamo = forward["entire_frame_compile_time_s"] - forward["backend_compile_time_s"]
    assert float(row["dynamo_s"]) == pytest.approx(dynamo, abs=2e-3)
    said = texts(at)
    assert "Total compile time unknown, not charted" in said
    note = next(c.value for c in at.caption if "Total compile time unknown" in c.value).replace("\\", "")
    # the runs named: every 2.3.1 workload (no record at all) and 2.4.1's training run
    assert "4 runs" in note
    assert f"{compilers[0]}: cnn_train · cpu · train, gbreak_dyn · cpu · infer, mlp_tf_infer · cpu · infer" in note
    assert f"{compilers[1]}: cnn_train · cpu · train" in note and "backward" in note


def test_trends_say_which_points_are_unknown(old, monkeypatch):
    root, db = old
    runs = captured(root)
    compilers = sorted({r["torch"] for r in runs.values()})
    at = open_page(db, "trends", monkeypatch, compilers=compilers)
    charts = {json.loads(c.proto.spec)["layer"][1]["encoding"]["y"]["field"]: c for c in at.get("vega_lite_chart")}
    notes = [c.value.replace("\\", "") for c in at.caption if c.value.startswith("Unknown, not charted")]
    [compile_note] = [n for n in notes if "compile time" in n]
    # the compile-time chart holds every run with a whole record, and the note names the others
    untimed = {(v, w) for (v, w), r in runs.items() if not r["records"] or (v, w) == ("2.4.1", "cnn_train")}
    assert compile_note.startswith(f"Unknown, not charted: {len(untimed)} runs")
    folder = {run_id: (Path(path).parent.name.removeprefix("cpu-torch"), Path(path).name)
              for run_id, path in con_rows(db, "SELECT run_id, source_path FROM runs")}
    charted = {folder[r["run_id"]] for r in chart_rows(charts["compile_s"])}
    assert charted == set(runs) - untimed
    # graph breaks: each run the chart leaves out is named, with its release
    known = {folder[r["run_id"]] for r in chart_rows(charts["graph_breaks"])}
    gaps = [(v, w) for (v, w) in runs if (v, w) not in known]
    assert gaps, "the 2.3.1 gbreak_dyn run's graph breaks are unknown (its restarted frame has no record)"
    [breaks_note] = [n for n in notes if "can count them" in n]
    assert breaks_note.startswith(f"Unknown, not charted: {len(gaps)} run")
    for v, w in gaps:
        assert f"{runs[(v, w)]['torch']}: {w}" in breaks_note


def test_trends_by_date_say_how_many_undated_runs_are_left_out(old, monkeypatch):
    _, db = old
    undated = con_rows(db, "SELECT count(*) FROM runs WHERE started_at IS NULL")[0][0]
    assert undated == 2  # the two profiles: Kineto writes no start date
    at = open_page(db, "trends", monkeypatch, axis="date")
    assert f"Runs without a start time ({undated}) are left out of the charts" in texts(at)


def test_changes_of_one_run_series_say_a_series_needs_two(old, monkeypatch):
    _, db = old
    ranks = con_rows(db, "SELECT rank, count(*) FROM runs WHERE model = 'trace_filter' GROUP BY rank ORDER BY rank")
    assert ranks == [(0, 1), (1, 1)]  # HTA's sampled_rank-0 and -1, a run each
    at = open_page(db, "changes", monkeypatch, model="trace_filter")
    said = texts(at).replace("\\", "")
    assert "A series needs runs of one workload" in said and "at two points" in said
    workloads = [w for (w,) in con_rows(db, "SELECT workload FROM run_metrics WHERE model = 'trace_filter' ORDER BY rank")]
    assert [w.endswith(f"rank={r}]") for w, r in zip(workloads, (0, 1), strict=True)] == [True, True]
    assert ", ".join(workloads) in said  # both one-run series named
    assert "every run has the kernels" not in said
    # a model whose series hold four runs each still reads its change points
    at = open_page(db, "changes", monkeypatch, model="gbreak_dyn")
    assert "A series needs" not in texts(at) and len(at.dataframe[0].value) == 3


def test_compare_shows_an_unknown_side_as_the_cli_does(old, monkeypatch):
    root, db = old
    runs = captured(root)
    base, head = (f"compiler={runs[(v, 'cnn_train')]['torch']}" for v in ("2.4.1", "2.5.1"))
    at = open_page(db, "compare", monkeypatch, base=base, head=head)
    moved = at.dataframe[0].value
    row = moved[(moved["workload"] == "cnn_train") & (moved["metric"] == "compile_s")].iloc[0]
    assert (row["base"], row["verdict"], row["how"]) == ("n/a", "n/a", "base unknown")
    # the head's total: its frame's compile, and its backward's (compiled lazily, after the frame)
    head_run = runs[("2.5.1", "cnn_train")]
    assert float(row["head"]) == pytest.approx(sum(r["entire_frame_compile_time_s"] for r in head_run["records"])
                                               + sum(r["inductor_compile_time_s"] for r in head_run["bwd"]), abs=0.01)
    frames = [getattr(d.value, "data", d.value) for d in at.dataframe]
    every = next(f for f in frames if "compile_s_base" in f.columns)
    cell = every.loc[every["model"] == "cnn_train", "compile_s_base"].iloc[0]
    assert cell == "n/a"
    assert "compile_s: over the workloads whose value is known on both sides" in texts(at).replace("\\", "")


def test_compare_honours_run_ids_in_the_link(old, monkeypatch):
    _, db = old
    (a, b), = con_rows(db, "SELECT min(run_id), max(run_id) FROM runs WHERE model = 'gbreak_dyn'")
    at = open_page(db, "compare", monkeypatch, base=a, head=b)
    assert (at.selectbox(key="compare_base").value, at.selectbox(key="compare_head").value) == (a, b)
    assert at.query_params["base"] == [a] or at.query_params["base"] == a
    cmd = next(s.value for s in [*at.success, *at.warning])
    assert a in cmd.replace("\\", "") and b in cmd.replace("\\", "")
    at = open_page(db, "compare", monkeypatch, base="ffffffff", head=b)
    assert "picks no runs" in " ".join(w.value for w in at.warning)


def test_an_unknown_metric_is_said_in_its_columns_words(old):
    """unknowns.left_out says why a metric is unknown in the words of the run_rollups column whose
    NULL leaves it unknown (schema/comments.sql, as docs/tables.md shows them): over real runs of
    2.3 to 2.7 and a profile, the metric is unknown exactly where that column is."""
    _, db = old
    con = reader(db)
    try:
        points = {r["run_id"]: r for r in run_query(con, "dashboard/trend_points")}
        rollups = {r["run_id"]: r for r in con.execute("SELECT r.run_id, u.* EXCLUDE (run_id) FROM runs r "
                                                       "JOIN run_rollups u USING (run_key)").fetchdf().to_dict("records")}
    finally:
        con.close()
    assert set(points) == set(rollups)
    for metric, column in unknowns.UNKNOWN_OF.items():
        said = unknown_when("run_rollups", column)
        assert said and unknowns.why(metric) == said, metric
        unknown = {run for run, p in points.items() if p[metric] is None}
        assert unknown == {run for run, u in rollups.items() if pd.isna(u[column])}, metric
        if unknown:
            frame = pd.DataFrame([points[run] for run in sorted(points)])
            assert unknowns.left_out(frame, metric).endswith(f": {said}."), metric
    assert any(p["compile_s"] is None for p in points.values())  # the 2.3 and 2.4 training runs
