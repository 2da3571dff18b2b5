"""One rule a metric, wherever it is shown: several runs of a workload at one point make one value,
a measured time the least of them (min of N), a count their lower median, the fusion rate that of those
node counts, the hit rate that of their summed counts (views/06_point_values.sql; analysis/regress.py's
side_value). On the harness captures with their repeats (three performance runs of mobilenetv2_100 a
release, harness-timm-repeats), `iwh compare`, the Compile time page's query, the Trends page's points
and lines and its suite geomean all show the compile time the runs' own traces give: each run's total is
the sum of its compilation_metrics records' entire_frame_compile_time_s (inference: no backward to add),
read here with json."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from inductor_warehouse.analysis.compare import compare
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.store.api import Warehouse
from tests.conftest import reader, unpack_harness_captures, unpack_harness_repeats
from tests.test_dashboards import APP

RELEASES = {"cpu-torch2.13": "2.13.0+cpu", "cpu-torch2.14.1": "2.14.1+cu130"}


def _trace_total(logs: list[Path]) -> float | None:
    totals = []
    for log in logs:
        for line in log.read_text().splitlines():
            at = line.find('{"compilation_metrics"')
            if at >= 0:
                totals.append(json.loads(line[at:])["compilation_metrics"].get("entire_frame_compile_time_s") or 0.0)
    return sum(totals) if totals else None


@pytest.fixture(scope="module")
def repeats(tmp_path_factory) -> tuple[str, dict]:
    root = tmp_path_factory.mktemp("rules")
    caps, reps = unpack_harness_captures(root / "caps"), unpack_harness_repeats(root / "reps")
    folders = [top / release for top in (caps, reps) for release in RELEASES]
    db = str(root / "w.duckdb")
    assert ingest_paths(folders, db).errors == 0
    # (release, model, harness mode) -> every run's compile time, from its trace
    times: dict[tuple[str, str, str], list[float]] = {}
    with reader(db) as con:  # the harness's own loop (2.14.1's accuracy-job): a process a model, its log a run
        job = dict(con.execute("SELECT source_path, model FROM runs WHERE source_path LIKE '%/accuracy-job/trace/%'")
                   .fetchall())
    assert len(job) == 3
    for folder in folders:
        found = [(run.name, list((run / "trace").glob("*.log")), run.parent.name) for run in
                 (m.parent for m in folder.glob("*/*/manifest.json"))]
        found += [(job[str(log)], [log], "accuracy") for log in folder.glob("accuracy-job/trace/*.log")]
        for model, logs, kind in found:
            total = _trace_total(logs)
            mode = "performance" if kind.startswith("performance") else "accuracy"
            if total is not None:
                times.setdefault((RELEASES[folder.name], model, mode), []).append(total)
    return db, times


def test_compile_time_is_the_least_of_a_points_runs_everywhere(repeats, monkeypatch):
    db, times = repeats
    mobilenet = {v: sorted(times[(v, "mobilenetv2_100", "performance")]) for v in RELEASES.values()}
    assert all(len(t) == 3 for t in mobilenet.values())
    # the least differs from the median run's: the test tells the rules apart
    assert all(t[0] < t[1] for t in mobilenet.values())
    want = {v: t[0] for v, t in mobilenet.items()}
    workload = "mobilenetv2_100 [device=cpu harness=performance mode=infer]"

    with reader(db) as con:
        result = compare(con, "compiler=2.13", "compiler=2.14.1")
    [pair] = [p for p in result.pairs if p.workload == workload]
    assert (pair.metrics["compile_s"].base, pair.metrics["compile_s"].head) == pytest.approx(
        (want["2.13.0+cpu"], want["2.14.1+cu130"]), abs=1e-6)
    with Warehouse(db) as wh:
        breakdown = {r["compiler_version"]: r for r in wh.query("compile/compile_time_breakdown",
                                                               models="mobilenetv2_100").to_dicts()
                     if r["workload"] == workload}
        points = [r for r in wh.query("dashboard/trend_points", models="mobilenetv2_100").to_dicts()
                  if r["workload"] == workload]
        suite = wh.query("dashboard/suite_trend").to_dicts()
    assert {v: r["total_s"] for v, r in breakdown.items()} == {v: round(t, 3) for v, t in want.items()}
    assert {v: r["runs"] for v, r in breakdown.items()} == {v: 3 for v in want}
    assert len(points) == 6 and all(r["compile_s_point"] == round(want[r["compiler_version"]], 3) for r in points)
    # the suite's line: each workload's least time a release, their geomean, whose ratio is compare's
    per_workload = {(r["point"], r["workload"]): r["value"] for r in suite if r["metric"] == "compile_s"}
    assert {v: per_workload[(v, workload)] for v in want} == {v: round(t, 6) for v, t in want.items()}
    least = {(v, m, mode): min(t) for (v, m, mode), t in times.items()}
    ratios = [least[("2.14.1+cu130", m, mode)] / t for (v, m, mode), t in least.items() if v == "2.13.0+cpu"]
    assert len(ratios) == 6
    geomean = {r["point"]: r["geomean"] for r in suite if r["metric"] == "compile_s"}
    [summary] = [s for s in result.summary if s.metric == "compile_s"]
    independent = math.exp(sum(map(math.log, ratios)) / len(ratios))
    assert summary.geomean_ratio == pytest.approx(independent, rel=1e-9)
    assert geomean["2.14.1+cu130"] / geomean["2.13.0+cpu"] == pytest.approx(independent, rel=1e-5)

    # the Trends page draws each workload's line through those values, not a median Vega makes of the runs
    monkeypatch.setenv("IWH_DB", db)
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.switch_page("sections/trends.py").run()
    assert not at.exception, [e.value for e in at.exception]
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    [timed] = [s for s in specs if s["layer"][1]["encoding"]["y"]["field"] == "compile_s"]
    line = timed["layer"][0]["encoding"]["y"]
    assert line["field"] == "compile_s_point" and "aggregate" not in line
    assert all("aggregate" not in s["layer"][0]["encoding"]["y"] for s in specs)
