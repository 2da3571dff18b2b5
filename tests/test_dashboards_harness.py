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


def test_suite_page_per_release_hud_rule_and_models_with_their_runs(harness, monkeypatch):
    db, caps = harness
    monkeypatch.setenv("IWH_DB", db)
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params.update({"base": "2.13.0+cpu", "head": "2.14.1+cu130"})
    at.run()
    at.switch_page("sections/suite.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert (at.selectbox(key="suite_base").value, at.selectbox(key="suite_head").value) == ("2.13.0+cpu", "2.14.1+cu130")
    assert at.query_params["suite"] == "timm_models"
    # per release: the CPU points' workloads and pass counts, as the CSVs say (every accuracy passes)
    releases = frame_with(at, "point", "pass_rate")
    cpu = releases[releases["point"].isin(["2.13.0+cpu", "2.14.1+cu130"])]
    assert cpu["workloads"].tolist() == [3, 3] and cpu["passed_workloads"].tolist() == [3, 3]
    rule = frame_with(at, "metric", "verdict", "limit_value")
    assert sorted(rule["metric"]) == ["compilation_latency", "compression_ratio", "geomean_speedup", "pass_rate"]
    # 2.14.1's mean compile took 87.5 s a model against 2.13's 58.1 s: past 1.15x by HUD's rule
    assert rule.set_index("metric").loc["compilation_latency", "verdict"] == "regression"
    # per model at the comparison point: each speedup as 2.14.1's performance CSV wrote it, its link the
    # run of the capture folder that compiled it
    models = frame_with(at, "model", "speedup", "performance_run")
    for _, row in models.iterrows():
        folder = caps / "cpu-torch2.14.1" / "performance" / row["model"]
        written = _csv(next(folder.glob("*_performance.csv")))[0]
        assert float(row["speedup"]) == pytest.approx(float(written["speedup"]), abs=5e-5)
        (run_id,) = con_rows(db, "SELECT run_id FROM runs WHERE source_path = ?", [str(folder)])[0]
        assert row["performance_run"] == f"explorer?run={run_id}"
    assert "2 runs hold harness results alone" in texts(at).replace("\\", "")


def test_suite_page_by_a_label_point(harness, monkeypatch):
    """`?point=variant`: each Inductor config of the GPU captures is a point of its own."""
    db, _ = harness
    monkeypatch.setenv("IWH_DB", db)
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params.update({"point": "variant"})
    at.run()
    at.switch_page("sections/suite.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="suite_key").value == "variant"
    assert (at.selectbox(key="suite_base").value, at.selectbox(key="suite_head").value) == ("default", "single_config")


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
