"""Pages say "unknown" where the warehouse holds NULL: counts no file of a run gives (a profile, a
TORCH_COMPILE_DEBUG tree, torch-spyre files) are never shown as 0 or as "none recorded", and the
unknown_* rows that say why a log cannot tell a count are notes, not events.

The warehouse: the profiler fixture (profiles alone), a debug tree alone (tests/fixtures/debug_tree/
cpu-2.13-cnn), a torch-spyre run (tests/fixtures/spyre/softmax) and the 2.3 to 2.7 captures of
captures/cpu-torch2.3-2.7-old-releases.tar.xz (trace logs of 2.3 and 2.4 write no recompile record).
Expected values are read from the tables with plain SQL, never through the pages' canned queries.
"""

from __future__ import annotations

import tarfile

import pytest

from inductor_warehouse.ingest.load import ingest_paths
from tests.test_dashboards import FIXTURES, con_rows, metrics, one, open_page, texts, with_copy

OLD = FIXTURES / "captures" / "cpu-torch2.3-2.7-old-releases.tar.xz"
PROFILES = FIXTURES / "profiler"
DEBUG_TREE = FIXTURES / "debug_tree" / "cpu-2.13-cnn"
SPYRE = FIXTURES / "spyre" / "softmax"
# the two lone profiles, named as zoo runs: their models are the names' first parts
PROFILE_MODELS = ["mlp", "dyn_graphbreak"]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> str:
    root = tmp_path_factory.mktemp("unknown")
    with tarfile.open(OLD) as tf:
        tf.extractall(root / "old", filter="data")
    db = str(root / "wh.duckdb")
    summary = ingest_paths([str(root / "old"), str(PROFILES), str(DEBUG_TREE), str(SPYRE)], db)
    assert summary.runs > 12, summary.line()
    return with_copy(db)


def run_of(db: str, where: str) -> str:
    return one(db, f"SELECT run_id FROM runs WHERE {where} ORDER BY run_id LIMIT 1")


def explorer_events(db: str, run_id: str, monkeypatch):
    at = open_page(db, "explorer", monkeypatch)
    at.query_params["run"] = run_id
    at.query_params["tab"] = "Compile events"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("where", [
    "source_path LIKE '%mlp__infer__bf16__max_autotune.profile.json'",  # a profile alone
    f"source_path LIKE '%{DEBUG_TREE.name}%'",  # a debug tree alone
    "source_path LIKE '%spyre%softmax%'",  # torch-spyre files
])
def test_explorer_says_unknown_where_no_file_records_events(warehouse, monkeypatch, where):
    run_id = run_of(warehouse, where)
    # the rollup's counts are NULL: nothing of this run records breaks, recompiles, restarts, failures
    assert con_rows(warehouse, "SELECT graph_breaks, recompiles, restarts, failures FROM run_rollups WHERE run_id = ?",
                    [run_id]) == [(None, None, None, None)]
    at = explorer_events(warehouse, run_id, monkeypatch)
    assert metrics(at)["Compile events"] == "–"
    shown = texts(at)
    assert "they are unknown, not 0" in shown
    assert "No graph breaks, recompiles" not in shown


def test_explorer_counts_events_not_unknown_markers(warehouse, monkeypatch):
    # 2.3.1 gbreak_dyn: its trace log's graph breaks, restarts and recompiles (from TORCH_LOGS), beside
    # unknown_* rows saying what the 2.3 log cannot tell
    run_id = run_of(warehouse, "model = 'gbreak_dyn' AND compiler_version LIKE '2.3.%'")
    real = one(warehouse, "SELECT count(*) FROM compile_events WHERE run_id = ? AND kind NOT LIKE 'unknown%'", [run_id])
    markers = one(warehouse, "SELECT count(*) FROM compile_events WHERE run_id = ? AND kind LIKE 'unknown%'", [run_id])
    assert real > 0 and markers > 0
    at = explorer_events(warehouse, run_id, monkeypatch)
    assert metrics(at)["Compile events"] == f"{real:,}"
    table = next(d.value for d in at.dataframe if "kind" in d.value.columns)
    assert len(table) == real and not table["kind"].str.startswith("unknown").any()
    recompiles = one(warehouse, "SELECT recompiles FROM run_rollups WHERE run_id = ?", [run_id])
    assert recompiles is not None  # told by its TORCH_LOGS though the 2.3 trace cannot
    shown = texts(at)
    assert "writes no record of a recompile" in shown
    assert f"its recompiles, {recompiles:,}, are counted from TORCH\\_LOGS" in shown  # markdown-escaped
    assert "Graph breaks unknown" in shown  # a 2.3 log cannot tell them: graph_breaks NULL
    assert one(warehouse, "SELECT graph_breaks FROM run_rollups WHERE run_id = ?", [run_id]) is None


def graph_breaks_page(db: str, monkeypatch, models: list[str] | None = None, **params):
    at = open_page(db, "graph_breaks", monkeypatch, **({"filter_models": models} if models else {}))
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_graph_breaks_page_profiles_alone_are_unknown(warehouse, monkeypatch):
    at = graph_breaks_page(warehouse, monkeypatch, models=PROFILE_MODELS)
    runs = one(warehouse, "SELECT count(*) FROM runs WHERE model IN (?, ?)", PROFILE_MODELS)
    assert runs >= 2
    m = metrics(at)
    assert [m[k] for k in ("Graph breaks", "Uncounted breaks", "Recompiles", "Restarts", "Failures")] == ["–"] * 5
    assert f"Unknown, not 0: none of these {runs} runs" in texts(at)
    assert not at.success  # never a green "none recorded" where the counts are unknown


def test_graph_breaks_page_sums_known_counts_and_shows_markers(warehouse, monkeypatch):
    at = graph_breaks_page(warehouse, monkeypatch)
    m = metrics(at)
    for label, column in (("Graph breaks", "graph_breaks"), ("Uncounted breaks", "uncounted_breaks"),
                          ("Recompiles", "recompiles")):
        total, unknown = con_rows(warehouse, f"SELECT sum({column}), count(*) - count({column}) FROM run_rollups")[0]
        assert unknown > 0  # the profiles, the debug tree, Spyre, and logs of 2.3/2.4
        assert m[label] == f"{int(total):,}"
    assert f"unknown in {one(warehouse, 'SELECT count(*) - count(uncounted_breaks) FROM run_rollups')} runs" in texts(at)
    # the unknown_* rows are a kind to drill into
    assert one(warehouse, "SELECT count(*) FROM compile_events WHERE kind = 'unknown_recompile'") > 0
    at.session_state["breaks_kind"] = "unknown_recompile"
    at.run()
    assert not at.exception
    assert "Why recompiles are unknown: causes ranked" in [s.value for s in at.subheader]


def test_overview_profiles_alone_say_unknown(warehouse, monkeypatch):
    at = open_page(warehouse, "overview", monkeypatch, filter_models=PROFILE_MODELS)
    m = metrics(at)
    assert (m["Graphs"], m["Kernels"], m["Extern calls"]) == ("–", "–", "–")
    runs = one(warehouse, "SELECT count(*) FROM runs WHERE model IN (?, ?)", PROFILE_MODELS)
    assert f"Graphs, kernels and extern calls: unknown, not 0, in {runs} runs" in texts(at)
    latest = next(d for d in at.dataframe if "fusion_rate" in d.value.columns).value
    # NULL stays a number column's NaN (an empty cell), not text a ProgressColumn marks as an error
    assert latest["fusion_rate"].dtype == "float64" and latest["fusion_rate"].isna().all()


def test_overview_sums_known_runs_only(warehouse, monkeypatch):
    at = open_page(warehouse, "overview", monkeypatch)
    m = metrics(at)
    graphs, unknown = con_rows(warehouse, "SELECT sum(graphs), count(*) - count(graphs) FROM run_rollups")[0]
    assert unknown > 0
    assert m["Graphs"] == f"{int(graphs):,}"
    assert m["Kernels"] == f"{one(warehouse, 'SELECT count(*) FROM kernels WHERE generated'):,}"
    assert f"summed over the runs whose files tell them; unknown, not 0, in {unknown} runs" in texts(at)
    latest = next(d for d in at.dataframe if "fusion_rate" in d.value.columns).value
    assert latest["fusion_rate"].dtype == "float64"
    assert latest["fusion_rate"].notna().any() and latest["fusion_rate"].isna().any()
