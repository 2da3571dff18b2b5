"""The pages that read PyTorch's benchmark harness numbers, under streamlit.testing's AppTest, on the
harness captures (conftest.build_harness_warehouse): the Benchmark suite page, Compare releases with
the harness numbers, What changed when with compile phases and Triton launch configs. Expected values
are read from the capture folders or counted from the warehouse tables with plain SQL here."""

from __future__ import annotations

import csv

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import build_harness_warehouse
from tests.test_dashboards import APP, con_rows, frame_with, open_page, texts, with_copy


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    root = tmp_path_factory.mktemp("dash_harness")
    return with_copy(build_harness_warehouse(root)), root / "harness-timm"


def _csv(path) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _suite(db, monkeypatch, **params) -> AppTest:
    monkeypatch.setenv("IWH_DB", db)
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params.update(params)
    at.run()
    at.switch_page("sections/suite.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _charts(at: AppTest) -> list[str]:
    """The titles of the page's Vega-Lite charts."""
    import json

    return [json.loads(c.proto.spec)["title"]["text"] for c in at.get("vega_lite_chart")]


def test_suite_page_charts_hud_numbers_over_releases(harness, monkeypatch):
    """HUD's four charts over the releases of the CPU captures (no nightly label: a point is a compiler
    version), pickers in the URL; before a point is clicked, the page says to click one."""
    db, caps = harness
    at = _suite(db, monkeypatch)
    assert at.selectbox(key="suite_key").value == "compiler version"
    assert (at.selectbox(key="suite_suite").value, at.selectbox(key="suite_mode").value,
            at.selectbox(key="suite_dtype").value, at.selectbox(key="suite_device").value) == (
        "timm_models", "infer", "fp32", "cpu")
    assert {k: at.query_params[k] for k in ("suite", "mode", "dtype", "device")} == {
        "suite": "timm_models", "mode": "infer", "dtype": "fp32", "device": "cpu"}
    assert _charts(at) == ["Pass rate", "Geomean speedup (x)", "Mean compilation latency (s)",
                           "Peak memory compression ratio (x)"]
    assert "Click a point of a chart" in texts(at)
    assert "2 runs hold harness results alone" in texts(at).replace("\\", "")


def test_a_clicked_point_opens_its_models_against_the_point_before(harness, monkeypatch):
    """The point 2.14.1 of inductor's line (as a click leaves it in the URL): its three models, each
    against 2.13, with HUD's flags by its 5% rule worked out here from the two releases' CSVs, and
    links to the compiles the rows measured."""
    db, caps = harness
    at = _suite(db, monkeypatch, at="2.14.1+cu130", line="inductor")
    table = frame_with(at, "model", "flags", "speedup", "performance_run")
    assert sorted(table["model"]) == ["deit_tiny_patch16_224.fb_in1k", "mobilenetv2_100", "repvgg_a2"]
    for _, row in table.iterrows():
        old, new = (float(_csv(next((caps / release / "performance" / row["model"]).glob("*_performance.csv")))[0]
                          ["speedup"]) for release in ("cpu-torch2.13", "cpu-torch2.14.1"))
        assert row["speedup"] == f"{old:.3f} → {new:.3f}"
        flagged = "speedup" in row["flags"].split()
        improved = "+speedup" in row["flags"].split()
        assert (flagged, improved) == (old - new > 0.05 * old, new - old > 0.05 * old), row["model"]
        folder = caps / "cpu-torch2.14.1" / "performance" / row["model"]
        (run_id,) = con_rows(db, "SELECT run_id FROM runs WHERE source_path = ?", [str(folder)])[0]
        assert row["performance_run"] == f"explorer?run={run_id}"
    assert "3 models at 2.14.1+cu130, against 2.13.0+cpu" in texts(at).replace("\\", "")


def test_suite_page_by_a_label_point(harness, monkeypatch):
    """`?key=variant`: each Inductor config of the GPU captures is a point of its own."""
    db, _ = harness
    at = _suite(db, monkeypatch, key="variant", device="cuda")
    assert at.selectbox(key="suite_key").value == "variant"
    assert at.selectbox(key="suite_device").value == "cuda"
    at = _suite(db, monkeypatch, key="variant", device="cuda", at="single_config", line="inductor · single_config")
    table = frame_with(at, "model", "flags", "speedup")
    assert len(table) == 2


@pytest.fixture(scope="module")
def with_sets(tmp_path_factory):
    """The harness captures and, beside them, the demo's two CI result sets (demo/harness-ci-timm-cpu:
    the 2.13 and 2.14.1 CPU CSVs alone, labelled ci=..., no torch version)."""
    import tarfile
    from pathlib import Path

    from inductor_warehouse.ingest.load import ingest_paths

    root = tmp_path_factory.mktemp("dash_sets")
    db = build_harness_warehouse(root)
    with tarfile.open(Path(__file__).parent.parent / "demo" / "harness-ci-timm-cpu.tar.xz") as tf:
        tf.extractall(root / "sets", filter="data")
    assert ingest_paths([root / "sets"], db).errors == 0
    return with_copy(db)


def test_a_result_set_of_no_known_release_is_a_point_on_no_line(with_sets, monkeypatch):
    """By compiler version, the two CI sets are points of their own after the releases, named by
    their label, drawn as marks the releases' line does not join; a click on one opens its models
    with nothing before them. By their label (`?key=ci`) they are a series, and the runs without
    the label are counted off the axis."""
    import json

    at = _suite(with_sets, monkeypatch, suite="timm_models", device="cpu")
    chart = json.loads(at.get("vega_lite_chart")[1].proto.spec)
    line, marks = chart["layer"]
    assert line["mark"]["type"] == "line" and line["transform"] == [{"filter": "datum.in_series"}]
    assert marks["encoding"]["x"]["sort"] == ["2.13.0+cpu", "2.14.1+cu130", "ci=timm-cpu-2.13", "ci=timm-cpu-2.14.1"]
    assert "2 points of no known release (ci=timm-cpu-2.13, ci=timm-cpu-2.14.1)" in texts(at).replace("\\", "")
    at = _suite(with_sets, monkeypatch, suite="timm_models", device="cpu", at="ci=timm-cpu-2.14.1", line="inductor")
    table = frame_with(at, "model", "flags", "speedup")
    assert sorted(table["model"]) == ["deit_tiny_patch16_224.fb_in1k", "mobilenetv2_100", "repvgg_a2"]
    assert set(table["flags"]) == {""} and "→" not in "".join(table["speedup"])
    assert "a result set of no known release: nothing before it" in texts(at).replace("\\", "")
    at = _suite(with_sets, monkeypatch, key="ci", suite="timm_models", at="timm-cpu-2.14.1", line="inductor")
    table = frame_with(at, "model", "flags", "speedup")
    assert table.set_index("model").loc["mobilenetv2_100", "speedup"] == "1.063 → 2.730"
    held = con_rows(with_sets, "SELECT count(DISTINCT run_id) FROM harness_results h JOIN runs r USING (run_id) "
                               "WHERE h.kind IN ('performance', 'accuracy') AND (r.labels ->> 'ci') IS NULL")[0][0]
    assert held > 0 and f"{held} runs with harness results but no label ci: on no point here" in \
        texts(at).replace("\\", "")


def test_compare_page_shows_the_harness_numbers(harness, monkeypatch):
    db, caps = harness
    at = open_page(db, "compare", monkeypatch)
    at.selectbox(key="compare_base").select("compiler=2.13.0+cpu").run()
    at.selectbox(key="compare_head").select("compiler=2.14.1+cu130").run()
    assert not at.exception, [e.value for e in at.exception]
    hud = frame_with(at, "metric", "ran_in", "verdict")
    assert sorted(hud["metric"]) == ["compilation_latency", "compression_ratio", "geomean_speedup", "pass_rate"]
    wide = frame_with(at, "model", "speedup_base", "accuracy_head")
    written = _csv(next((caps / "cpu-torch2.13" / "performance" / "repvgg_a2").glob("*_performance.csv")))[0]
    perf = wide[(wide["model"] == "repvgg_a2") & (wide["config"] == "harness=performance")].iloc[0]
    assert perf["speedup_base"] == f"{float(written['speedup']):.3f}"
    acc = wide[(wide["model"] == "repvgg_a2") & (wide["config"] == "harness=accuracy")].iloc[0]
    assert (acc["accuracy_base"], acc["accuracy_head"]) == ("pass", "pass")


def test_changes_page_shows_phases_and_triton_configs(harness, monkeypatch):
    db, _ = harness
    at = open_page(db, "changes", monkeypatch, changes_model="mobilenetv2_100", changes_series="variant")
    # the GPU performance runs, default -> single_config: 8 kernels' launch configs (and their code, and
    # some compile phases) changed
    points = frame_with(at, "series", "changed")
    assert len(points) == 1 and "triton_config x8" in points["changed"].iloc[0]
    values = frame_with(at, "metric", "before", "after", "detail")
    launches = values[values["metric"] == "triton_config"]
    assert len(launches) == 8 and all(b.startswith("warps=") for b in launches["before"])
    at = open_page(db, "changes", monkeypatch, changes_model="mobilenetv2_100")
    assert not at.exception
    changed = " ".join(frame_with(at, "series", "changed")["changed"])
    assert "compile_phase" in changed and "kernel_identity" in changed


def test_trends_draws_a_suite_as_one_line_with_its_outliers(harness, monkeypatch):
    """`?view=suite`: timm_models as one line a metric, the geomean over its workloads of each one's
    lower median at a release (kernels counted here from the kernels table: a count's one rule), with
    the workloads that moved most against the suite listed."""
    import json
    import math

    db, _ = harness
    monkeypatch.setenv("IWH_DB", db)
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params.update({"view": "suite"})
    at.run()
    at.switch_page("sections/trends.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="trend_suite").value == "timm_models · cpu"
    per_run = con_rows(db, """
        SELECT r.compiler_version, w.workload, count(k.kernel_name) FILTER (WHERE k.generated)
        FROM runs r JOIN run_workloads w USING (run_id) LEFT JOIN kernels k USING (run_id)
        WHERE r.labels ->> 'suite' = 'timm_models' AND r.device = 'cpu'
          AND r.run_id NOT IN (SELECT run_id FROM harness_holders)
        GROUP BY ALL""")
    by_point: dict = {}
    for version, workload, kernels in per_run:
        by_point.setdefault(version, {}).setdefault(workload, []).append(kernels)
    want = {}
    for version, workloads in by_point.items():
        medians = [sorted(v)[(len(v) - 1) // 2] for v in workloads.values()]
        positive = [m for m in medians if m > 0]
        want[version] = math.exp(sum(math.log(m) for m in positive) / len(positive))
    charts = {json.loads(c.proto.spec)["encoding"]["y"]["title"]: c for c in at.get("vega_lite_chart")}
    assert set(charts) == {"Generated kernels (geomean a workload)", "Fusion rate (geomean)",
                           "Compile time, s (geomean a workload)"}
    outliers = frame_with(at, "workload", "step", "suite_step", "outlier")
    assert len(outliers) > 0 and (outliers["outlier"] > 0).all() and (outliers["outlier"].diff().dropna() <= 0).all()
    from inductor_warehouse.store.api import Warehouse

    with Warehouse(db + ".check") as wh:
        got = {r["point"]: r["geomean"] for r in wh.query("dashboard/suite_trend").to_dicts()
               if r["metric"] == "kernels" and r["suite"] == "timm_models" and r["device"] == "cpu"}
    assert set(got) == set(want)
    for version, value in want.items():
        assert got[version] == pytest.approx(value, rel=1e-6), version


def test_the_page_opens_on_the_suite_with_the_most_points(harness, monkeypatch, tmp_path):
    """huggingface comes first by name, but the harness's Reformer capture gives it one point where
    the timm captures give timm_models more: the page opens on timm_models' charts, huggingface's when
    the URL asks for it."""
    import shutil
    import tarfile

    from inductor_warehouse.ingest.load import ingest_paths
    from tests.conftest import FIXTURES, reader

    db = str(tmp_path / "w.duckdb")
    shutil.copy(harness[0], db)
    with tarfile.open(FIXTURES / "captures" / "harness-reformer.tar.xz") as tf:
        tf.extractall(tmp_path / "reformer", filter="data")
    assert ingest_paths([tmp_path / "reformer"], db).runs >= 1
    con = reader(db)
    try:
        points = dict(con.execute("SELECT suite, count(DISTINCT point) FROM harness_point_summaries "
                                  "WHERE point_key = 'compiler' GROUP BY suite").fetchall())
    finally:
        con.close()
    assert points["huggingface"] == 1 < points["timm_models"]
    assert _suite(db, monkeypatch).selectbox(key="suite_suite").value == "timm_models"
    assert _suite(db, monkeypatch, suite="huggingface").selectbox(key="suite_suite").value == "huggingface"


def test_runs_that_compiled_nothing_seen_read_as_unknown_not_0(harness, monkeypatch):
    """A run of harness CSVs alone lists no kernel count, no graphs and no failures on the Overview
    and in the Run explorer: blank and '–', not 0, beside runs whose kernels are counted."""
    db, _ = harness
    alone = {r[0] for r in con_rows(db, "SELECT run_id FROM artifacts GROUP BY run_id "
                                        "HAVING bool_and(kind IN ('harness', 'manifest', 'other'))")}
    assert len(alone) == 2
    at = open_page(db, "overview", monkeypatch)
    latest = frame_with(at, "kernels", "latest_run_id")
    shown = latest[latest["latest_run_id"].isin(alone)]
    assert len(shown) and (shown[["kernels", "extern_calls", "failures"]] == "").all().all(), shown
    counted = latest[~latest["latest_run_id"].isin(alone)]
    assert (counted["kernels"] != "").all()
    # Trends charts compiles, as the Overview counts them: on dates (runs without a version too) the
    # harness results alone are no point, and every run it lists has its kernels counted
    at = open_page(db, "trends", monkeypatch, trend_axis="date")
    runs = frame_with(at, "kernels", "run_id")
    assert not set(runs["run_id"]) & alone and len(runs) and (runs["kernels"] != "").all()
    at = open_page(db, "explorer", monkeypatch, explore_run=sorted(alone)[0])
    assert {m.label: m.value for m in at.metric}["Kernels"] == "–"
    assert any("unknown, not 0" in i.value for i in at.info)


def test_changes_page_says_what_a_model_of_harness_results_alone_is(harness, monkeypatch):
    """What changed when, for a model whose runs hold harness CSVs alone: not '0 runs', but how many
    runs hold results, and where they are charted."""
    db, _ = harness
    [(model, n)] = con_rows(db, "SELECT model, count(*) FROM runs WHERE model = 'timm_models_accuracy' GROUP BY model")
    monkeypatch.setenv("IWH_DB", db)
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    at.switch_page("sections/changes.py")
    at.query_params["model"] = model
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    said = texts(at).replace("\\", "")
    assert f"The {n} run{'s' if n > 1 else ''} of {model} hold" in said, said
    assert f"[Benchmark suite](suite?suite={model})" in said and "0 runs" not in said
