"""Every dashboard page under streamlit.testing's AppTest, on real fixture warehouses.

The main warehouse (conftest.build_fixture_warehouse) holds the three CPU corpora (15 runs, graph breaks,
recompiles, compile times, no profiles), one profiled GPU training run and one trace log with
corrupted JSON (ingest errors). Expected numbers are counted straight from the warehouse tables
with plain SQL here, never through the canned query files the pages run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.store.opening import connect
from tests.conftest import reader, build_fixture_warehouse

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "dashboards" / "app.py"
FIXTURES = ROOT / "tests" / "fixtures"
SINGLE_RUN = FIXTURES / "runs" / "cpu-torch2.6.0" / "mlp"
PAGES = ["overview", "trends", "compare", "changes", "suite", "explorer", "graph_breaks", "compile_time", "sql_console"]


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
    assert m["Compilers"] == f"{one(warehouse, 'SELECT count(DISTINCT compiler_version) FROM runs'):,}"
    assert m["Kernels"] == f"{one(warehouse, 'SELECT count(*) FROM kernels WHERE generated'):,}"
    assert m["Extern calls"] == f"{one(warehouse, 'SELECT count(*) FROM kernels WHERE NOT generated'):,}"
    errors = one(warehouse, "SELECT count(*) FROM ingest_errors")
    assert errors > 0  # the corrupted trace
    assert m["Ingest errors"] == f"{errors:,}"
    latest = at.dataframe[1].value
    # "latest" is the newest release, not the last run started: the corpora were captured 2.14.1 first,
    # then 2.6.0 and 2.13, so ca's last-started run is its 2.13 run, and its latest the 2.14.1 one
    versions = {v: r for r, v in [(r, v) for r, v in con_rows(warehouse, "SELECT run_id, compiler_version FROM runs "
                                                                         "WHERE model = 'ca'")]}
    newest = max(versions, key=lambda v: tuple(int(x) for x in v.split("+")[0].split(".")))
    assert newest == "2.14.1+cu130"
    last_started = one(warehouse, "SELECT compiler_version FROM runs WHERE model = 'ca' ORDER BY started_at DESC LIMIT 1")
    assert last_started == "2.13.0+cpu"
    row = latest[latest["workload"].str.split(" · ").str[0] == "ca"].iloc[0]  # the workload's name: ca · cpu
    assert (row["latest_compiler"], row["latest_run_id"]) == (newest, versions[newest])
    failures = one(warehouse, "SELECT count(*) FROM compile_events WHERE kind = 'failure' AND run_id = ?",
                   [versions[newest]])
    assert row["failures"] == failures == 3
    kernels = one(warehouse, "SELECT count(*) FROM kernels WHERE generated AND run_id = ?", [versions[newest]])
    assert row["kernels"] == kernels
    # one row per workload: the GPU mlp runs are two workloads (training, max-autotune inference)
    assert len(latest) == m_workloads(warehouse) and m["Workloads"] == str(len(latest))
    # what the profiles say: one run with kernel times, the rest without a profile
    assert "1 run of 21 has profiled kernel times; 20 runs have no profile." in texts(at)


def con_rows(db: str, sql: str, params=None) -> list[tuple]:
    con = reader(db + ".check")
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def m_workloads(db: str) -> int:
    """Workloads counted here: model, device and the workload labels of each run, read with json."""
    import json
    keys = set()
    for model, device, labels in con_rows(db, "SELECT model, device, labels FROM runs"):
        labels = json.loads(labels) if labels else {}
        keys.add((model, device, *(str(labels.get(k)) for k in ("mode", "dtype", "variant", "batch"))))
    return len(keys)


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
    assert float(got.iloc[0]) == pytest.approx(rate, abs=1e-4)
    breaks = one(warehouse, "SELECT count(*) FROM compile_events e JOIN runs USING (run_id) "
                            "WHERE kind = 'graph_break' AND model = 'dynamic' AND compiler_version = '2.13.0+cpu'")
    assert breaks > 0
    got = runs[(runs["model"] == "dynamic") & (runs["compiler_version"] == "2.13.0+cpu")]["graph_breaks"]
    assert int(got.iloc[0]) == breaks
    # the selectbox fallback for picking a point: the chosen run opens in the explorer
    run_id = one(warehouse, "SELECT run_id FROM runs WHERE model = 'cnn' AND compiler_version = '2.13.0+cpu'")
    at.selectbox(key="trend_run").select(run_id).run()
    at.button(key="trend_open").click().run()
    assert not at.exception
    assert at.session_state["explore_run"] == run_id


def test_trends_legend_names_each_workload_whole(warehouse, monkeypatch):
    """A legend cut at a width made two workloads read the same (`deit_tiny_patch16_224.fb_in1…` twice):
    names are never cut, and the legend takes fewer columns for long ones."""
    at = open_page(warehouse, "trends", monkeypatch)
    legends = [json.loads(c.proto.spec)["layer"][0]["encoding"]["color"] for c in at.get("vega_lite_chart")]
    assert legends
    for colour in legends:
        names = colour["scale"]["domain"]
        assert len(set(names)) == len(names) and colour["legend"]["labelLimit"] == 0
        longest = max(len(n) for n in names)
        # as many columns of the longest name (6 px a character, 30 of symbol and padding) as fit the
        # 760 px main column, at most 3, and at least 1
        columns, width = colour["legend"]["columns"], longest * 6 + 30
        assert 1 <= columns <= 3
        assert columns == 1 or columns * width <= 760
        assert columns == 3 or (columns + 1) * width > 760


def frame_with(at: AppTest, *columns: str):
    """The page's table that has these columns."""
    return next(d.value for d in at.dataframe if set(columns) <= set(getattr(d.value, "columns", [])))


def test_compare_releases(warehouse, monkeypatch):
    at = open_page(warehouse, "compare", monkeypatch)
    assert at.selectbox(key="compare_base").value == "compiler=2.6.0+cu124"
    assert at.selectbox(key="compare_head").value == "compiler=2.14.1+cu130"
    per_model = frame_with(at, "model", "kernels_base")
    both = one(warehouse, "SELECT count(*) FROM (SELECT model FROM runs WHERE compiler_version = '2.6.0+cu124' "
                          "INTERSECT SELECT model FROM runs WHERE compiler_version = '2.14.1+cu130')")
    assert len(per_model) == both == 5
    for version, side in (("2.6.0+cu124", "base"), ("2.14.1+cu130", "head")):
        kernels = one(warehouse, "SELECT count(*) FROM kernels JOIN runs USING (run_id) WHERE generated "
                                 "AND model = 'cnn' AND compiler_version = ?", [version])
        assert per_model.set_index("model").loc["cnn", f"kernels_{side}"] == f"{kernels:,}"
    # the kernel diff of a workload, and a changed kernel shown side by side
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
    assert metrics(at)["Unchanged"] == str(sigs)
    # 2.6.0's cpp_fused_gelu_2 is 2.14.1's cpp_fused_gelu_view_2: the same fusion, renamed
    kernels = frame_with(at, "status", "base_kernel", "head_kernel")
    renamed = kernels[kernels["status"] == "renamed"]
    assert ("cpp_fused_gelu_2", "cpp_fused_gelu_view_2") in set(zip(renamed["base_kernel"], renamed["head_kernel"], strict=True))
    assert int(metrics(at)["Renamed"]) == len(renamed)
    # the kernel diff's changed kernel, then one of the model line's below it (One model line, both sides)
    codes = [c.value.rstrip() for c in at.code if c.language in ("python", "cpp")]
    shown = set(codes[:2])
    con = reader(warehouse + ".check")
    # st.code drops trailing whitespace
    sources = {r[0].rstrip() for r in con.execute(
        "SELECT s.source FROM kernels k JOIN kernel_sources s USING (source_hash) WHERE k.run_id IN (?, ?)",
        [base_run, head_run]).fetchall()}
    con.close()
    assert len(shown) == 2 and set(codes) <= sources and len(codes) == 4
    assert at.query_params["workload"] == "transformer"
    # 2.6 recorded no provenance: every line of 2.14.1 moved, the busiest first (x = x + s.fc2(...))
    assert at.selectbox(key="compare_line").value.endswith("gen_models.py:28")


def test_compare_names_new_compile_failures(warehouse, monkeypatch):
    """ca under 2.14.1 fails to compile 3 frames that 2.13 compiles: the page says so as a regression,
    lists each failure, and offers the command that gates on it and its markdown."""
    at = open_page(warehouse, "compare", monkeypatch)
    at.selectbox(key="compare_base").select("compiler=2.13.0+cpu").run()
    at.selectbox(key="compare_head").select("compiler=2.14.1+cu130").run()
    assert not at.exception
    failed = con_rows(warehouse, "SELECT c.compile_id FROM compilations c JOIN runs r USING (run_id) WHERE r.model = 'ca' "
                                 "AND r.compiler_version = '2.14.1+cu130' AND c.fail_type IS NOT NULL ORDER BY 1")
    assert [f for (f,) in failed] == ["1/0", "3/0", "5/0"]
    errors = " ".join(e.value for e in at.warning)
    # the regressions, then what was compared: a count of one side's workloads never reads as their subject
    assert "3 regressions: ca failures, ca fallbacks, ca recompiles. Compared: 5 workloads of 5 models on both sides" \
        in errors.replace("\\", "")
    # the command is shown as code (cells.prose), not as text between escaped backticks
    assert "`iwh compare --base compiler=2.13.0+cpu --head compiler=2.14.1+cu130 --fail-on regression` exits 1" in errors
    assert "\\`" not in errors
    # the answer leads: the verdict, then what moved (regressions first), before any note
    moved = frame_with(at, "metric", "verdict", "delta")
    assert moved["verdict"].tolist()[:3] == ["regression"] * 3
    table = frame_with(at, "failure", "compile_id", "ran_eagerly")
    assert table["compile_id"].tolist() == [f for (f,) in failed] and set(table["failure"]) == {"new"}
    codes = [c.value for c in at.code]
    assert "iwh compare --base compiler=2.13.0+cpu --head compiler=2.14.1+cu130 --fail-on regression" in codes
    assert any(c.startswith("## compare: base compiler=2.13.0+cpu") and "| ca | new | 1/0 |" in c for c in codes)
    # the sides are in the page's address: a shared link opens the same comparison
    assert at.query_params["base"] == "compiler=2.13.0+cpu" and at.query_params["head"] == "compiler=2.14.1+cu130"


def test_a_link_opens_the_comparison_it_names(warehouse, monkeypatch):
    monkeypatch.setenv("IWH_DB", warehouse)
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params.update({"base": "compiler=2.13.0+cpu", "head": "compiler=2.14.1+cu130",
                            "workload": "ca", "models": "ca,cnn"})
    at.run()
    at.switch_page("sections/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert (at.selectbox(key="compare_base").value, at.selectbox(key="compare_head").value) == (
        "compiler=2.13.0+cpu", "compiler=2.14.1+cu130")
    assert at.selectbox(key="compare_model").value == "ca"
    assert at.session_state["filter_models"] == ["ca", "cnn"]


def test_explorer_drills_to_kernel_source(warehouse, monkeypatch):
    run_id = one(warehouse, "SELECT run_id FROM runs WHERE model = 'transformer' AND compiler_version = '2.13.0+cpu'")
    at = open_page(warehouse, "explorer", monkeypatch, explore_run=run_id)
    m = metrics(at)
    assert m["Graphs"] == str(one(warehouse, "SELECT count(*) FROM graphs WHERE run_id = ?", [run_id]))
    assert m["Kernels"] == str(one(warehouse, "SELECT count(*) FROM kernels WHERE generated AND run_id = ?", [run_id]))
    graph_id = at.selectbox(key="graph").value
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
    graph_id = at.selectbox(key="graph").value
    lengths = []
    for tab in ("Fusion groups", "Layouts", "Compile events"):  # tabs are lazy: only the open one's tables
        at.session_state["tab"] = tab
        at.run()
        assert not at.exception
        lengths += [len(d.value) for d in at.dataframe]
    for table in ("fusions", "layouts"):
        n = one(warehouse, f"SELECT count(*) FROM {table} WHERE run_id = ? AND graph_id = ?", [run_id, graph_id])
        assert n in lengths, (table, n, lengths)
    events = one(warehouse, "SELECT count(*) FROM compile_events WHERE run_id = ?", [run_id])
    assert events > 0 and events in lengths
    assert metrics(at)["Compile events"] == str(events)


def test_graph_breaks_ranked_and_drill(warehouse, monkeypatch):
    at = open_page(warehouse, "graph_breaks", monkeypatch)
    m = metrics(at)
    for kind, label in (("graph_break", "Graph breaks"), ("recompile", "Recompiles"), ("failure", "Failures")):
        assert m[label] == f"{one(warehouse, 'SELECT count(*) FROM compile_events WHERE kind = ?', [kind]):,}"
    # each failed compile once: ca 2.14.1's three, one per compilation_metrics record with a fail_type
    assert m["Failures"] == str(one(warehouse, "SELECT count(*) FROM compilations WHERE fail_type IS NOT NULL")) == "3"
    reasons = at.dataframe[0].value
    assert reasons["events"].sum() == one(warehouse, "SELECT count(*) FROM compile_events WHERE kind = 'graph_break'")
    top = reasons.iloc[0]
    drill = at.dataframe[1].value
    assert len(drill) == top["events"]
    assert drill["run_id"].nunique() == top["runs"]
    # every break counts wherever it happened; the columns say where (here all in the models' own code)
    assert (reasons["in_model"] + reasons["in_packages"] + reasons["in_torch"] + reasons["in_stdlib"]
            == reasons["events"]).all()
    # ca 2.14.1's three frames in inspect.py that could not handle their break are failures, not breaks
    assert "gb0088" not in set(reasons["cause"])


def test_graph_breaks_failures_of_ca(warehouse, monkeypatch):
    at = open_page(warehouse, "graph_breaks", monkeypatch, breaks_kind="failure")
    reasons = at.dataframe[0].value
    assert reasons[["cause", "events", "in_stdlib", "models"]].values.tolist() == [["gb0088", 3, 3, 1]]
    drill = at.dataframe[1].value
    assert drill["compile_id"].tolist() == ["1/0", "3/0", "5/0"] and set(drill["model"]) == {"ca"}
    assert at.query_params["kind"] == "failure"


def test_changes_page_shows_the_failures_of_ca(warehouse, monkeypatch):
    at = open_page(warehouse, "changes", monkeypatch, changes_model="ca")
    points = frame_with(at, "changed", "before", "after")
    row = points[points["after"] == "2.14.1+cu130"].iloc[0]
    assert row["before"] == "2.13.0+cpu" and {"failures", "fallbacks"} <= set(row["changed"].split(", "))
    assert at.query_params["model"] == "ca"


def test_compile_time(warehouse, monkeypatch):
    at = open_page(warehouse, "compile_time", monkeypatch)
    table = at.dataframe[0].value
    # one row per workload and compiler version: the GPU mlp runs are a training and an inference workload
    groups = {(model, device, version, *(str(json.loads(labels or "{}").get(k)) for k in ("mode", "dtype", "variant", "batch")))
              for model, device, version, labels in con_rows(
                  warehouse, "SELECT model, device, compiler_version, labels FROM runs WHERE run_id IN "
                             "(SELECT run_id FROM compilations)")}
    assert len(table) == len(groups)
    # one run per group here, so the median run is that run: dynamo + backward cumulative time
    run_id = one(warehouse, "SELECT run_id FROM runs WHERE model = 'cnn' AND compiler_version = '2.13.0+cpu'")
    total_us = one(warehouse, "SELECT sum(coalesce(dynamo_cumulative_compile_time_us, 0)) FROM compilations "
                              "WHERE run_id = ?", [run_id])
    bwd = one(warehouse, "SELECT coalesce(sum(duration_us), 0) FROM timings WHERE run_id = ? AND "
                         "name = 'bwd_backward_cumulative_compile_time'", [run_id])
    row = table[table["group"] == "cnn · cpu · 2.13.0+cpu"].iloc[0]  # workload · compiler
    assert float(row["total_s"]) == pytest.approx((total_us + bwd) / 1e6, abs=1e-3)
    # the phases shown add up to the total shown, in every group whose release reports them all (a part
    # a release does not report is an empty cell)
    parts = table[["dynamo_s", "aot_s", "inductor_s", "code_gen_s"]].replace("", None).astype(float)
    table = table.assign(total_s=table["total_s"].astype(float))
    whole = parts.notna().all(axis=1)
    assert whole.sum() >= 15
    assert (parts[whole].sum(axis=1) - table.loc[whole, "total_s"]).abs().max() <= 0.002


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


def test_prose_shows_backticked_parts_as_code_and_escapes_the_rest():
    from inductor_warehouse.dashboards.cells import prose

    text = "selector 'x_y' picks no runs (`iwh runs` lists every run)"
    assert prose(text) == "selector 'x\\_y' picks no runs \\(`iwh runs` lists every run\\)"
    assert prose("a ` b") == "a \\` b"  # a backtick without its pair is text
    assert prose("a `` b") == "a \\`\\` b"  # an empty code span is text too


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


def test_explorer_times_extern_calls(warehouse, monkeypatch):
    """The profiled GPU training run: every extern call of its forward graph has the time of the kernels
    its op launched, and the graph's time is its generated kernels' plus its extern calls'."""
    run_id = one(warehouse, "SELECT run_id FROM runs WHERE device = 'cuda' AND run_id IN "
                            "(SELECT run_id FROM timings WHERE source = 'profiler')")
    at = open_page(warehouse, "explorer", monkeypatch, explore_run=run_id, graph="0_forward")
    kernels = frame_with(at, "kernel_name", "time_us", "generated")
    extern = kernels[~kernels["generated"]]
    assert len(extern) == one(warehouse, "SELECT count(*) FROM kernels WHERE run_id = ? AND graph_id = '0_forward' "
                                         "AND NOT generated", [run_id]) == 3
    assert extern["time_us"].notna().all()
    graphs = frame_with(at, "graph_id", "generated_us", "extern_us")
    forward = graphs.set_index("graph_id").loc["0_forward"]
    launched = one(warehouse, "SELECT sum(duration_us) FROM timings WHERE run_id = ? AND graph_id = '0_forward' "
                              "AND launched_by IS NOT NULL", [run_id])
    assert forward["extern_us"] == pytest.approx(launched, abs=0.1)
    assert forward["extern_us"] == pytest.approx(extern["time_us"].sum(), abs=0.1)
    assert forward["kernel_time_us"] == pytest.approx(forward["generated_us"] + forward["extern_us"], abs=0.1)
    assert "an extern call's being the kernels its op launched" in texts(at)


@pytest.mark.parametrize(("page", "params"), [("trends", {"axis": "date", "view": "suite"}),
                                              ("compare", {"head": "compiler=2.13.0+cpu"}),
                                              ("graph_breaks", {"kind": "recompile"})])
def test_a_link_sets_widgets_without_streamlit_warning(warehouse, monkeypatch, page, params):
    """A page opened by its URL puts the URL's values in session state: its widgets then take no
    default of their own, else Streamlit logs a warning with a stack trace on the server."""
    import logging

    from streamlit.elements.lib import policies
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)  # Streamlit warns once a process
    said: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: said.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("streamlit.elements.lib.policies")
    logger.addHandler(handler)
    try:
        monkeypatch.setenv("IWH_DB", warehouse)
        at = AppTest.from_file(str(APP), default_timeout=120).run()
        at.switch_page(f"sections/{page}.py")
        for k, v in params.items():
            at.query_params[k] = v
        at.run()
    finally:
        logger.removeHandler(handler)
    assert not at.exception, [e.value for e in at.exception]
    assert not [s for s in said if "Session State API" in s], said
    first = {"trends": "trend_axis", "compare": "compare_head", "graph_breaks": "breaks_kind"}[page]
    assert at.session_state[first] == next(iter(params.values())), "the URL's value is the widget's"
