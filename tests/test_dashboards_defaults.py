"""The pages over a mix of compiles and runs that hold a benchmark harness's results alone, under
streamlit.testing's AppTest: the harness captures (conftest.build_harness_warehouse), the Reformer
harness capture (one run of one release), the constructed XPU result sets (tests/fixtures/harness/
constructed/xpu: CSVs of no release) and the renamed debug tree (two compiles of no TORCH_TRACE log).
Harness-only runs are told apart as the Overview tells them (harness_holders); expected values are
counted from the warehouse tables with plain SQL here, or read from the fixtures."""

from __future__ import annotations

import json
import tarfile

import pytest

from tests.conftest import FIXTURES, build_harness_warehouse
from tests.test_dashboards import con_rows, metrics, open_page, texts, with_copy

# the runs of harness results and no file a compile wrote, as views/12_workloads.sql defines them
HELD = ("SELECT run_id FROM artifacts WHERE run_id IN (SELECT run_id FROM artifacts WHERE kind = 'harness') "
        "GROUP BY run_id HAVING bool_and(kind IN ('harness', 'manifest', 'other'))")


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    from inductor_warehouse.ingest.load import ingest_paths

    root = tmp_path_factory.mktemp("dash_mixed")
    db = build_harness_warehouse(root)
    with tarfile.open(FIXTURES / "captures" / "harness-reformer.tar.xz") as tf:
        tf.extractall(root / "reformer", filter="data")
    # the XPU sets hold one wider-than-header row on purpose (tests/fixtures/SOURCES.md): a warning
    for path, runs in ((root / "reformer", 1), (FIXTURES / "harness" / "constructed" / "xpu", 13),
                       (FIXTURES / "renamed_debug_tree", 2)):
        assert ingest_paths([path], db).runs == runs
    return with_copy(db)


def test_compile_time_names_only_compiles_of_unknown_total(mixed, monkeypatch):
    """The two renamed debug-tree runs (no TORCH_TRACE log) are the compiles of unknown total, with
    the reason; no run of harness results alone is listed among them."""
    held = {r[0] for r in con_rows(mixed, HELD)}
    held_models = {r[0] for r in con_rows(mixed, f"SELECT DISTINCT model FROM runs WHERE run_id IN ({HELD})")}
    assert len(held) > 10 and "timm_models" in held_models
    at = open_page(mixed, "compile_time", monkeypatch)
    [note] = [t for t in texts(at).replace("\\", "").splitlines() if "Total compile time unknown" in t]
    assert "2 runs (2.3.0a0+6ddf5cf85e.nv24.04: fwd_default_info · cuda, run_attn_compile_default_2024_09_16 · cuda)" \
        in note, note
    assert "TORCH_TRACE" in note  # the reason stays
    assert not any(m in note for m in held_models), note


def test_trends_counts_the_workloads_the_overview_counts(mixed, monkeypatch):
    """Trends offers the Overview's workloads, the compiles' alone: the 2.14.1 harness job's versioned
    accuracy CSV is no workload there, so no chart draws its unknowns."""
    compiled = con_rows(mixed, f"SELECT count(DISTINCT workload) FROM run_workloads WHERE run_id NOT IN ({HELD}) "
                               "AND compiler_version IS NOT NULL")[0][0]
    assert con_rows(mixed, f"SELECT count(*) FROM runs WHERE run_id IN ({HELD}) AND compiler_version IS NOT NULL")[0][0]
    overview = metrics(open_page(mixed, "overview", monkeypatch))["Workloads"]
    at = open_page(mixed, "trends", monkeypatch)
    [picker] = [m for m in at.multiselect if m.key == "trend_series"]
    assert picker.label == f"Workloads ({compiled} in view)" and overview == str(compiled)
    for chart in at.get("vega_lite_chart"):
        data = chart.proto.datasets or []
        assert "timm_models_accuracy" not in json.dumps(json.loads(chart.proto.spec)) + str(data)


def test_suite_opens_on_the_series_with_most_releases(mixed, monkeypatch):
    """The XPU sets give timm_models · infer · amp_bf16 · xpu six points of no release; the page opens on
    the CPU fp32 series, two releases on a line."""
    at = open_page(mixed, "suite", monkeypatch)
    picked = tuple(at.selectbox(key=f"suite_{c}").value for c in ("suite", "mode", "dtype", "device"))
    assert picked == ("timm_models", "infer", "fp32", "cpu")
    spec = json.loads(at.get("vega_lite_chart")[0].proto.spec)
    assert spec["layer"][1]["encoding"]["x"]["sort"][:2] == ["2.13.0+cpu", "2.14.1+cu130"]


def test_changes_opens_on_a_model_with_a_series(mixed, monkeypatch):
    """Reformer comes first by name but has one run; the page opens on a model whose workload has
    runs of two releases, and says its change points, not that a series needs two points."""
    [(first, runs)] = con_rows(mixed, "SELECT model, count(*) FROM runs GROUP BY model ORDER BY model LIMIT 1")
    assert first.startswith("Reformer") and runs == 1
    longest = con_rows(mixed, f"SELECT model FROM run_workloads WHERE run_id NOT IN ({HELD}) GROUP BY model, workload "
                              "HAVING count(DISTINCT compiler_version) >= 2 ORDER BY model")
    at = open_page(mixed, "changes", monkeypatch)
    model = at.selectbox(key="changes_model").value
    assert model == longest[0][0] != first
    assert "holds one point" not in texts(at) and f"runs of {model}" in texts(at).replace("\\", "")
