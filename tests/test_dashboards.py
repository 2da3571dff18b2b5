"""Every dashboard page under streamlit.testing's AppTest, on real fixture warehouses.

The main warehouse (conftest.build_fixture_warehouse) holds the three CPU corpora (15 runs, graph breaks,
recompiles, compile times, no profiles), one profiled GPU training run and one trace log with
corrupted JSON (ingest errors). Expected numbers are counted straight from the warehouse tables
with plain SQL here, never through the canned query files the pages run.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ingest.load import ingest_paths
from schema.warehouse import connect
from tests.conftest import reader, build_fixture_warehouse

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "dashboards" / "app.py"
FIXTURES = ROOT / "tests" / "fixtures"
SINGLE_RUN = FIXTURES / "runs" / "cpu-torch2.6.0" / "mlp"
PAGES = ["overview", "trends", "compare", "changes", "explorer", "graph_breaks", "compile_time", "sql_console"]


def build_warehouse(root: Path) -> str:
    return with_copy(build_fixture_warehouse(root))


def with_copy(db: str) -> str:
    shutil.copyfile(db, db + ".check")
    return db


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory) -> str:
    return build_warehouse(tmp_path_factory.mktemp("dash"))


@pytest.fixture(scope="session")
def single_run(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("single") / "one.duckdb")
    ingest_paths([str(SINGLE_RUN)], db)
    return with_copy(db)


@pytest.fixture(scope="session")
def empty(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("empty") / "empty.duckdb")
    connect(db).close()
    return with_copy(db)


def one(db: str, sql: str, params=None):
    # a copy: DuckDB refuses a second in-process connection to the app's file with another configuration
    con = reader(db + ".check")
    try:
        return con.execute(sql, params or []).fetchall()[0][0]
    finally:
        con.close()


def open_page(db: str, page: str, monkeypatch, **state) -> AppTest:
    monkeypatch.setenv("IWH_DB", db)
    at = AppTest.from_file(str(APP), default_timeout=120)
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    if page != "overview":
        at.switch_page(f"sections/{page}.py")
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def texts(at: AppTest) -> str:
    parts = [e.value for kind in ("markdown", "caption", "info", "warning", "success", "error", "code")
             for e in getattr(at, kind)]
    return "\n".join(str(p) for p in parts)


def test_overview_counts(warehouse, monkeypatch):
    at = open_page(warehouse, "overview", monkeypatch)
    m = metrics(at)
    assert m["Runs"] == f"{one(warehouse, 'SELECT count(*) FROM runs'):,}"
    # 15 CPU corpus runs, the profiled GPU run, the broken trace, 4 GPU runs captured cold and warm
    assert m["Runs"] == "21"
    assert m["Models"] == f"{one(warehouse, 'SELECT count(DISTINCT model) FROM runs'):,}"
    assert m["Kernels"] == f"{one(warehouse, 'SELECT count(*) FROM kernels WHERE generated'):,}"
    assert m["Extern calls"] == f"{one(warehouse, 'SELECT count(*) FROM kernels WHERE NOT generated'):,}"
    errors = one(warehouse, "SELECT count(*) FROM ingest_errors")
    assert errors > 0  # the corrupted trace
    assert m["Ingest errors"] == f"{errors:,}"
    latest = at.dataframe[1].value
    # the newest run of transformer is its 2.14.1 run (the corpora were captured 2.6.0, 2.13, 2.14.1)
    row = latest[latest["model"] == "transformer"].iloc[0]
    expected = one(warehouse, "SELECT run_id FROM runs WHERE model = 'transformer' ORDER BY started_at DESC LIMIT 1")
    assert row["latest_run_id"] == expected
    kernels = one(warehouse, "SELECT count(*) FROM kernels WHERE generated AND run_id = ?", [expected])
    assert row["kernels"] == kernels


def test_overview_filters_apply(warehouse, monkeypatch):
    at = open_page(warehouse, "overview", monkeypatch, filter_models=["mlp"], filter_devices=["cpu"])
    assert metrics(at)["Runs"] == str(one(warehouse, "SELECT count(*) FROM runs WHERE model = 'mlp' AND device = 'cpu'"))
    assert metrics(at)["Runs"] == "3"


def test_trends_points_and_open_run(warehouse, monkeypatch):
    at = open_page(warehouse, "trends", monkeypatch)
    runs = at.dataframe[0].value
    # on the compiler-version axis: every run that has a version (the broken trace has none)
    assert len(runs) == one(warehouse, "SELECT count(*) FROM runs WHERE compiler_version IS NOT NULL") == 20
    # fusion rate of the 2.13 transformer by the formula of views/10_graph_metrics.sql, from graphs
    rate = one(warehouse, "SELECT 1 - sum(post_fusion_nodes) / sum(pre_fusion_nodes) FROM graphs JOIN runs "
                          "USING (run_id) WHERE model = 'transformer' AND compiler_version = '2.13.0+cpu'")
    got = runs[(runs["model"] == "transformer") & (runs["compiler_version"] == "2.13.0+cpu")]["fusion_rate"]
    assert got.iloc[0] == pytest.approx(rate, abs=1e-4)
    breaks = one(warehouse, "SELECT count(*) FROM compile_events e JOIN runs USING (run_id) "
                            "WHERE kind = 'graph_break' AND model = 'dynamic' AND compiler_version = '2.13.0+cpu'")
    assert breaks > 0
    got = runs[(runs["model"] == "dynamic") & (runs["compiler_version"] == "2.13.0+cpu")]["graph_breaks"]
    assert got.iloc[0] == breaks
    # the selectbox fallback for picking a point: the chosen run opens in the explorer
    run_id = one(warehouse, "SELECT run_id FROM runs WHERE model = 'cnn' AND compiler_version = '2.13.0+cpu'")
    at.selectbox(key="trend_run").select(run_id).run()
    at.button(key="trend_open").click().run()
    assert not at.exception
    assert at.session_state["explore_run"] == run_id


def test_compare_releases(warehouse, monkeypatch):
    at = open_page(warehouse, "compare", monkeypatch)
    assert at.selectbox(key="compare_base").value == "compiler=2.6.0+cu124"
    assert at.selectbox(key="compare_head").value == "compiler=2.14.1+cu130"
    per_model = at.dataframe[1].value
    both = one(warehouse, "SELECT count(*) FROM (SELECT model FROM runs WHERE compiler_version = '2.6.0+cu124' "
                          "INTERSECT SELECT model FROM runs WHERE compiler_version = '2.14.1+cu130')")
    assert len(per_model) == both == 5
    for version, side in (("2.6.0+cu124", "base"), ("2.14.1+cu130", "head")):
        kernels = one(warehouse, "SELECT count(*) FROM kernels JOIN runs USING (run_id) WHERE generated "
                                 "AND model = 'cnn' AND compiler_version = ?", [version])
        assert per_model.set_index("model").loc["cnn", f"kernels_{side}"] == kernels
    # the kernel diff of the first model, and a changed kernel shown side by side
    at.selectbox(key="compare_model").select("transformer").run()
    assert not at.exception
    base_run, head_run = (one(warehouse, "SELECT run_id FROM runs WHERE model = 'transformer' AND "
                                         "compiler_version = ?", [v]) for v in ("2.6.0+cu124", "2.14.1+cu130"))
    sigs = one(warehouse, """
        SELECT count(*) FROM (
            SELECT coalesce(signature, kernel_name), source_hash FROM kernels WHERE run_id = ? AND generated
            INTERSECT ALL
            SELECT coalesce(signature, kernel_name), source_hash FROM kernels WHERE run_id = ? AND generated)""",
               [base_run, head_run])
    assert metrics(at)["Unchanged kernels"] == str(sigs)
    changed = int(metrics(at)["Changed kernels"])
    if changed:
        shown = {c.value.rstrip() for c in at.code if c.language in ("python", "cpp")}
        con = reader(warehouse + ".check")
        # st.code drops trailing whitespace
        sources = {r[0].rstrip() for r in con.execute(
            "SELECT s.source FROM kernels k JOIN kernel_sources s USING (source_hash) WHERE k.run_id IN (?, ?)",
            [base_run, head_run]).fetchall()}
        con.close()
        assert len(shown) == 2 and shown <= sources


def test_explorer_drills_to_kernel_source(warehouse, monkeypatch):
    run_id = one(warehouse, "SELECT run_id FROM runs WHERE model = 'transformer' AND compiler_version = '2.13.0+cpu'")
    at = open_page(warehouse, "explorer", monkeypatch, explore_run=run_id)
    m = metrics(at)
    assert m["Graphs"] == str(one(warehouse, "SELECT count(*) FROM graphs WHERE run_id = ?", [run_id]))
    assert m["Kernels"] == str(one(warehouse, "SELECT count(*) FROM kernels WHERE generated AND run_id = ?", [run_id]))
    graph_id = at.selectbox(key="explore_graph").value
    kernels = at.dataframe[2].value
    assert len(kernels) == one(warehouse, "SELECT count(*) FROM kernels WHERE run_id = ? AND graph_id = ?",
                               [run_id, graph_id])
    name = at.selectbox(key="explore_kernel").value
    source = one(warehouse, "SELECT s.source FROM kernels k JOIN kernel_sources s USING (source_hash) "
                            "WHERE k.run_id = ? AND k.graph_id = ? AND k.kernel_name = ?", [run_id, graph_id, name])
    shown = {c.value.rstrip(): c.language for c in at.code}  # st.code drops trailing whitespace
    assert shown.get(source.rstrip()) == "cpp"
    # a CPU run: no profiler trace, and the page says so
    assert "no profiler trace" in texts(at)


def test_explorer_fusions_layouts_lineage_events(warehouse, monkeypatch):
    run_id = one(warehouse, "SELECT run_id FROM runs WHERE model = 'dynamic' AND compiler_version = '2.13.0+cpu'")
    at = open_page(warehouse, "explorer", monkeypatch, explore_run=run_id)
    graph_id = at.selectbox(key="explore_graph").value
    lengths = [len(d.value) for d in at.dataframe]
    for table in ("fusions", "layouts"):
        n = one(warehouse, f"SELECT count(*) FROM {table} WHERE run_id = ? AND graph_id = ?", [run_id, graph_id])
        assert n in lengths, (table, n, lengths)
    events = one(warehouse, "SELECT count(*) FROM compile_events WHERE run_id = ?", [run_id])
    assert events > 0 and events in lengths
    assert metrics(at)["Compile events"] == str(events)


def test_graph_breaks_ranked_and_drill(warehouse, monkeypatch):
    at = open_page(warehouse, "graph_breaks", monkeypatch)
    m = metrics(at)
    for kind, label in (("graph_break", "Graph breaks"), ("recompile", "Recompiles")):
        assert m[label] == f"{one(warehouse, 'SELECT count(*) FROM compile_events WHERE kind = ?', [kind]):,}"
    reasons = at.dataframe[0].value
    assert reasons["events"].sum() == one(warehouse, "SELECT count(*) FROM compile_events WHERE kind = 'graph_break'")
    top = reasons.iloc[0]
    drill = at.dataframe[1].value
    assert len(drill) == top["events"]
    assert drill["run_id"].nunique() == top["runs"]


def test_compile_time(warehouse, monkeypatch):
    at = open_page(warehouse, "compile_time", monkeypatch)
    table = at.dataframe[0].value
    groups = one(warehouse, "SELECT count(*) FROM (SELECT DISTINCT model, compiler_version, device FROM runs "
                            "JOIN compilations USING (run_id))")
    assert len(table) == groups
    # one run per group here, so the median is that run's total: dynamo + backward cumulative time
    run_id = one(warehouse, "SELECT run_id FROM runs WHERE model = 'cnn' AND compiler_version = '2.13.0+cpu'")
    total_us = one(warehouse, "SELECT sum(coalesce(dynamo_cumulative_compile_time_us, 0)) FROM compilations "
                              "WHERE run_id = ?", [run_id])
    bwd = one(warehouse, "SELECT coalesce(sum(duration_us), 0) FROM timings WHERE run_id = ? AND "
                         "name = 'bwd_backward_cumulative_compile_time'", [run_id])
    row = table[(table["model"] == "cnn") & (table["compiler_version"] == "2.13.0+cpu")].iloc[0]
    assert row["total_s"] == pytest.approx((total_us + bwd) / 1e6, abs=1e-3)


def test_sql_console_reads_but_cannot_write_or_read_files(warehouse, monkeypatch):
    at = open_page(warehouse, "sql_console", monkeypatch)
    at.text_area(key="console_sql").input("SELECT count(*) AS n FROM kernels WHERE generated").run()
    at.button(key="console_run").click().run()
    assert not at.exception
    assert at.dataframe[0].value["n"].iloc[0] == one(warehouse, "SELECT count(*) FROM kernels WHERE generated")
    for bad in ("CREATE TABLE t (a INTEGER)", "SELECT * FROM read_csv('/etc/passwd')",
                f"ATTACH '{warehouse}.other' AS other", "SET enable_external_access = true"):
        at.text_area(key="console_sql").input(bad).run()
        at.button(key="console_run").click().run()
        assert not at.exception
        assert any("failed" in e.value for e in at.error), bad
    assert not Path(f"{warehouse}.other").exists()


def test_sql_console_runs_a_canned_query_with_its_parameters(warehouse, monkeypatch):
    at = open_page(warehouse, "sql_console", monkeypatch)
    at.selectbox(key="console_canned").select("explore/graphs").run()
    run_id = one(warehouse, "SELECT run_id FROM runs WHERE model = 'transformer' AND compiler_version = '2.13.0+cpu'")
    at.text_input(key="console_param_run_id").input(run_id).run()
    at.button(key="console_run").click().run()
    assert not at.exception
    assert len(at.dataframe[0].value) == one(warehouse, "SELECT count(*) FROM graphs WHERE run_id = ?", [run_id])


def test_artifact_text_is_never_html(warehouse, monkeypatch):
    """Pages render artifact text through escaped elements only: no element allows raw HTML."""
    for page in PAGES:
        at = open_page(warehouse, page, monkeypatch)
        elements = [e for kind in ("markdown", "caption") for e in getattr(at, kind)]
        assert elements and all(not e.proto.allow_html for e in elements), page


@pytest.mark.parametrize("page", PAGES)
def test_empty_warehouse_says_so(empty, monkeypatch, page):
    at = open_page(empty, page, monkeypatch)
    if page == "sql_console":
        return  # the console works on an empty warehouse too
    assert any("has no runs yet" in i.value for i in at.info), page


def test_missing_warehouse_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("IWH_DB", str(tmp_path / "absent.duckdb"))
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    assert not at.exception
    assert "iwh" in at.error[0].value and "ingest" in at.error[0].value


def test_single_run(single_run, monkeypatch):
    at = open_page(single_run, "overview", monkeypatch)
    assert metrics(at)["Runs"] == "1"
    assert any("One run in view" in i.value for i in at.info)
    at = open_page(single_run, "compare", monkeypatch)
    assert any("at least two" in i.value for i in at.info)
    at = open_page(single_run, "trends", monkeypatch)
    assert any("a trend needs runs of at least two" in i.value for i in at.info)
    at = open_page(single_run, "graph_breaks", monkeypatch)
    assert any("No graph breaks" in s.value for s in at.success)
