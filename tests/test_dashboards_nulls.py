"""Every page renders on warehouses where nullable columns are NULL: runs without device, backend,
compiler version, start time, labels or even a model (killed early, or written by other tools),
graphs without fusion or kernel counts (cache hits, AOTInductor logs), runs with no graphs, runs
whose graph breaks are unknown (a log before 2.6 that cannot tell them: graph_breaks NULL).

Hypothesis picks which columns of which runs and graphs go NULL (seeded: the same cases every
run), on a copy of the fixture warehouse; each page runs under AppTest and must show no exception,
saying in words where data is missing.
"""

from __future__ import annotations

import json
import shutil
from itertools import count

import duckdb
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import ROOT, build_fixture_warehouse
from tests.test_dashboards import PAGES

APP = ROOT / "dashboards" / "app.py"
NULLABLE = {
    "runs": ("model", "compiler_version", "compiler_commit", "device", "device_name", "backend", "rank", "labels",
             "started_at", "ingested_at", "pid", "python_version"),
    "graphs": ("compile_id", "phase", "aot_id", "folder", "pre_fusion_nodes", "post_fusion_nodes", "kernel_count",
               "extern_kernel_count", "compile_order"),
}
# which rows a column goes NULL in: one run's (the first by id), about half, or all
SHARES = {"one": "run_id = (SELECT min(run_id) FROM runs)", "half": "hash(run_id) % 2 = 0", "all": "true"}
_copies = count()


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> str:
    return build_fixture_warehouse(tmp_path_factory.mktemp("nulls"))


def mutations():
    column = st.one_of(*(st.tuples(st.just(t), st.sampled_from(cols)) for t, cols in NULLABLE.items()))
    return st.fixed_dictionaries({
        "nulls": st.lists(st.tuples(column, st.sampled_from(sorted(SHARES))), max_size=8, unique_by=lambda x: x[0]),
        "drop_graphs": st.sampled_from([None, *sorted(SHARES)]),
        "unknown_breaks": st.sampled_from([None, *sorted(SHARES)]),
    })


def mutated(base: str, case: dict) -> str:
    db = f"{base}.case{next(_copies)}"
    shutil.copyfile(base, db)
    con = duckdb.connect(db)
    for (table, column), share in case["nulls"]:
        con.execute(f"UPDATE {table} SET {column} = NULL WHERE {SHARES[share]}")
    if case["drop_graphs"]:
        for table in ("graphs", "kernels", "ops", "fusions", "layouts", "lineage"):
            con.execute(f"DELETE FROM {table} WHERE {SHARES[case['drop_graphs']]}")
    if case.get("unknown_breaks"):  # as ingest/parsers/trace_breaks.py writes them
        con.execute("INSERT INTO compile_events (run_id, kind, reason, source, run_key) "
                    "SELECT run_id, 'unknown_break', 'restarted 1 time, and no compilation_metrics for it', "
                    f"'torch_trace', run_key FROM runs WHERE {SHARES[case['unknown_breaks']]}")
    # what is summed from these rows is summed again, as a writer does for a warehouse without it
    con.execute("DELETE FROM run_rollups")
    con.execute("DELETE FROM run_tallies")
    con.close()
    ingest_paths([], db)  # the loader's writer sums them again
    return db


def render_every_page(db: str, monkeypatch) -> dict[str, AppTest]:
    monkeypatch.setenv("IWH_DB", db)
    out = {}
    for page in PAGES:
        at = AppTest.from_file(str(APP), default_timeout=120).run()
        if page != "overview":
            at.switch_page(f"sections/{page}.py")
            at.run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert not at.error, (page, [e.value for e in at.error])
        out[page] = at
    return out


ONE_RUN_WITHOUT_DEVICE = {"nulls": [(("runs", "device"), "one")], "drop_graphs": None}
NO_VERSIONS = {"nulls": [(("runs", "compiler_version"), "all"), (("runs", "labels"), "all")], "drop_graphs": None}
NO_GRAPHS_NO_COUNTS = {"nulls": [(("graphs", "pre_fusion_nodes"), "all"), (("graphs", "kernel_count"), "all")],
                       "drop_graphs": "half", "unknown_breaks": "half"}
NOTHING_KNOWN = {"nulls": [((t, c), "all") for t, cols in NULLABLE.items() for c in cols], "drop_graphs": None,
                 "unknown_breaks": "all"}


@settings(max_examples=4, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=mutations())
@example(case=ONE_RUN_WITHOUT_DEVICE)
@example(case=NO_VERSIONS)
@example(case=NO_GRAPHS_NO_COUNTS)
@example(case=NOTHING_KNOWN)
def test_every_page_renders_with_nulls(base, monkeypatch, case):
    pages = render_every_page(mutated(base, case), monkeypatch)
    said = {page: " ".join(e.value for kind in ("info", "caption", "warning", "markdown")
                           for e in getattr(at, kind)) for page, at in pages.items()}
    if case is NO_VERSIONS:
        assert "Runs without a compiler version" in said["trends"]
        assert "Comparing needs runs of at least two compiler versions or label values" in said["compare"]
    if case is ONE_RUN_WITHOUT_DEVICE:
        # the run picker names the run whose device column is NULL (the crash was in naming it): by the
        # device its manifest's label gives, as its workload does (views/12_workloads.sql), else as unknown
        con = duckdb.connect(base, read_only=True)
        run_id, model, label = con.execute("SELECT run_id, model, labels ->> 'device' FROM runs "
                                           "ORDER BY run_id LIMIT 1").fetchone()
        con.close()
        [named] = [str(o) for o in pages["trends"].selectbox[0].options if run_id in str(o)]
        assert named.startswith(f"{model} · {label or 'device unknown'} · "), named
    if case is NOTHING_KNOWN:
        assert "Runs without a compiler version" in said["trends"]


def raw_nulls(at: AppTest) -> list:
    """Where a page shows a NULL as Python does (`None`, `nan`, `NaT`) rather than as the pages show
    a missing value (an empty cell, `–`, or a word): in its headings, widget options and table cells.
    Link and yes/no columns are left out: a link with no target and a NULL box are drawn empty, and so
    are progress columns (cells.table keeps them numeric: text there is drawn as a cell error)."""
    found = [(kind, e.value) for kind in ("title", "header", "subheader", "caption", "metric")
             for e in getattr(at, kind) if {"None", "nan", "NaT"} & {w.strip(",.:;()") for w in str(e.value).split()}]
    found += [("option", o) for box in at.selectbox for o in box.options if "None" in str(o).split(" (")[-1]]
    for i, element in enumerate(at.dataframe):
        frame = getattr(element.value, "data", element.value)
        drawn_empty = {c for c, cfg in json.loads(element.proto.columns or "{}").items()
                       if cfg.get("type_config", {}).get("type") == "progress"}
        for col in frame.columns:
            if col in drawn_empty:
                continue
            known = frame[col].dropna()
            if len(known) and known.map(lambda v: isinstance(v, bool) or isinstance(v, str) and "?run=" in v).all():
                continue
            if frame[col].isna().any():
                found.append(("table", i, col))
    return found


def test_no_page_shows_none_for_a_null(base, monkeypatch):
    """Every NULL column of NOTHING_KNOWN, seen in the Overview's tables, the Run explorer's title,
    graph picker and tables, and the SQL console's result."""
    con = duckdb.connect(base, read_only=True)  # the same runs and graphs: only columns went NULL
    run_id = con.execute("SELECT run_id FROM graphs GROUP BY run_id ORDER BY count(*) DESC LIMIT 1").fetchone()[0]
    con.close()
    pages = render_every_page(mutated(base, NOTHING_KNOWN), monkeypatch)
    at = AppTest.from_file(str(APP), default_timeout=120).run()
    at.switch_page("sections/explorer.py")
    at.query_params["run"] = run_id
    pages["explorer"] = at.run()
    assert not at.exception
    assert at.subheader[0].value.endswith("unknown version · device unknown"), at.subheader[0].value
    assert all("phase unknown" in o for o in at.selectbox(key="graph").options)
    console = pages["sql_console"]
    console.text_area(key="console_sql").input("SELECT run_id, device, started_at, NULL::DOUBLE AS x FROM runs").run()
    console.button(key="console_run").click().run()
    assert len(console.dataframe[0].value) > 0
    for page, shown in pages.items():
        assert not raw_nulls(shown), (page, raw_nulls(shown))
