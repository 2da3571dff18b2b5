"""Run explorer: one run, down to the code of one kernel."""

import json

import streamlit as st

from inductor_warehouse.analysis import provenance
from inductor_warehouse.analysis.words import plural
from inductor_warehouse.dashboards import analyses, cells, chrome, data, filters
from inductor_warehouse.dashboards.model_lines import line_graph, show_model_lines
from inductor_warehouse.dashboards.navigation import RUN_KEY, VIEWER_COLUMN, VIEWER_TAB, viewer_url
from inductor_warehouse.dashboards.provenance_view import show_provenance

RUN_PAGE = 50
KERNEL_PAGE = 200
# the run's compile-event counts (run_metrics), as the Compile events tab names them
EVENT_COUNTS = {"graph_breaks": "graph breaks", "uncounted_breaks": "uncounted breaks", "recompiles": "recompiles",
                "restarts": "restarts", "failures": "failures"}

st.title("Run explorer")
st.caption("For one run: which graphs did Inductor compile, which kernels did each become, from "
           "which model lines, with which layouts, and what did the kernel code look like?")
chrome.stop_if_empty()


def pick_run() -> str | None:
    search = st.text_input("Find a run", placeholder="model, compiler version, run id or folder",
                           key="explore_search") or None
    runs = data.run("explore/runs", **filters.current(), search=search, limit=RUN_PAGE,
                    offset=chrome.page_offset("explore_runs_page", RUN_PAGE))
    if runs.empty:
        st.warning(f"No runs match ({filters.describe()}" + (f", search '{cells.plain(search)}'" if search else "") + ").")
        return None
    event = cells.table(runs.drop(columns="total"), height=250, on_select="rerun", selection_mode="single-row",
                       key="explore_runs_table")
    chrome.pager(runs["total"].iloc[0], RUN_PAGE, "explore_runs_page")
    rows = event.selection.rows if event else []
    if rows:
        st.session_state[RUN_KEY] = runs.iloc[rows[0]]["run_id"]
    return st.session_state.get(RUN_KEY)


def kernel_count(n) -> str:
    return "kernels unknown" if cells.or_missing(n, "") == "" else plural(int(n), "kernel")


# ?run=ID opens a run directly: links from elsewhere, and a shareable URL for the run in view
if st.query_params.get("run"):
    st.session_state[RUN_KEY] = st.query_params["run"]
with st.expander("Runs", expanded=RUN_KEY not in st.session_state):
    run_id = pick_run()
chrome.show_sql("explore/runs")
if not run_id:
    st.info("Pick a run in the table above.")
    st.stop()

st.query_params["run"] = run_id
run = data.run("explore/run", run_id=run_id)
if run.empty:
    st.warning(f"Run {cells.plain(run_id)} is not in the warehouse.")
    st.stop()
r = run.iloc[0]
st.subheader(cells.plain(f"{cells.or_missing(r['model'], 'model unknown')} · "
                         f"{cells.or_missing(r['compiler_version'], 'unknown version')} · "
                         f"{cells.or_missing(r['device'], 'device unknown')}"))
st.caption(cells.plain(f"run {r['run_id']} of workload {r['workload']}, from {r['source_path']}"))
cols = st.columns(7)
for col, (label, key) in zip(cols, [("Graphs", "graphs"), ("Kernels", "kernels"), ("Extern calls", "extern_calls"),
                                     ("Fusion rate", "fusion_rate"), ("Compile events", "compile_events"),
                                     ("Failures", "failures"), ("Ingest errors", "ingest_errors")], strict=False):
    col.metric(label, cells.number(r[key]))  # a help icon would cut "Compile events" at 1280 px
with st.expander("Environment and labels"):
    st.json({k: (str(v) if v is not None else None) for k, v in r.items() if k != "labels"}, expanded=False)
    labels = r["labels"] or {}
    st.json(json.loads(labels) if isinstance(labels, str) else labels, expanded=True)
if r["profiled_kernels"] == 0 and r["profiler_files"]:
    st.caption("This run's profile has no kernel events (a CPU run: the profiler records CPU ops, not Inductor's "
               "C++ kernels): kernel times are empty.")
elif r["profiled_kernels"] == 0:
    st.caption("This run has no profiler trace: kernel times are empty.")
else:
    st.caption("Kernel times: the profiler's, an extern call's being the kernels its op launched (cuBLAS, cuDNN, "
               "attention), so a graph's time is its generated kernels' plus its extern calls'.")

graphs = data.run("explore/graphs", run_id=run_id)


graph_id = None
if graphs.empty and cells.or_missing(r["graphs"], "") == "":  # unseen, as the rollup says: graphs NULL
    st.info("This run holds no file Inductor's graphs and kernels are read from (a debug tree's output code, a "
            "TORCH_TRACE log): only benchmark-harness results, TORCH_LOGS output or a profile. Its graphs and "
            "kernels are unknown, not 0.")
elif graphs.empty:
    st.info("This run has no Inductor graphs (nothing was compiled, or only a trace without output code).")
else:
    graph_labels = {g.graph_id: f"{g.graph_id} ({cells.or_missing(g.phase, 'phase unknown')}, compile "
                                f"{cells.or_missing(g.compile_id)}, {kernel_count(g.kernels)})"
                    for g in graphs.itertuples()}
    # the URL's graph (bound to the picker), else the graph a URL's model line became kernels in, else the first
    wanted = st.session_state.get("graph") or st.query_params.get("graph") or line_graph(run_id, graph_labels)
    if wanted not in graph_labels:
        st.session_state["graph"] = graphs["graph_id"].iloc[0]
    elif "graph" not in st.session_state:
        st.session_state["graph"] = wanted
    graph_id = st.selectbox("Graph", list(graph_labels), format_func=cells.labelled(graph_labels), key="graph",
                            bind="query-params")
TABS = ["Graphs and kernels", VIEWER_TAB, "Model lines", "Fusion groups", "Layouts", "Lineage", "Compile events"]
# bound to the URL's `tab`, and lazy: only the open tab's queries run
tab_kernels, tab_viewer, tab_lines, tab_fusion, tab_layouts, tab_lineage, tab_events = st.tabs(
    TABS, key="tab", bind="query-params")

with tab_viewer:
    if graph_id and tab_viewer.open:
        show_provenance(run_id, graph_id)

with tab_lines:
    if tab_lines.open:
        show_model_lines(run_id, r["model"])

with tab_kernels:
    if tab_kernels.open:
        cells.table(graphs)
        chrome.show_sql("explore/run", "explore/graphs")
        if graph_id:
            st.markdown(f"**Kernels of graph {cells.plain(graph_id)}**")
            kernels = data.run("explore/kernels", run_id=run_id, graph_id=graph_id, limit=KERNEL_PAGE,
                               offset=chrome.page_offset("explore_kernels_page", KERNEL_PAGE))
            if kernels.empty:
                st.info("This graph has no kernels.")
            else:
                shown = kernels.drop(columns=["total", "source_hash"])
                shown.insert(1, "viewer", [viewer_url(run_id, graph_id, kernel=k) for k in kernels["kernel_name"]])
                event = cells.table(shown, on_select="rerun", selection_mode="single-row", key="explore_kernels_table",
                                   column_config={"viewer": VIEWER_COLUMN})
                chrome.pager(kernels["total"].iloc[0], KERNEL_PAGE, "explore_kernels_page")
                generated = kernels[kernels["generated"]]
                rows = event.selection.rows if event else []
                if rows and kernels.iloc[rows[0]]["generated"]:
                    st.session_state["explore_kernel"] = kernels.iloc[rows[0]]["kernel_name"]
                if generated.empty:
                    st.caption("Only extern calls here: no generated source to show.")
                else:
                    names = generated["kernel_name"].tolist()
                    if st.session_state.get("explore_kernel") not in names:
                        st.session_state["explore_kernel"] = names[0]
                    name = st.selectbox("Kernel source", names, key="explore_kernel")
                    code = analyses.kernel_code(run_id, graph_id, name)
                    if code.text is None:
                        st.caption("The source of this kernel was not kept.")
                    else:
                        if code.note:
                            st.caption(code.note)
                        st.code(code.text, language=cells.code_language(code.text), line_numbers=True)
            chrome.show_sql("explore/kernels", "explore/kernel_code", "explore/output_code")

with tab_fusion:
    if graph_id and tab_fusion.open:
        fusions = data.run("explore/fusions", run_id=run_id, graph_id=graph_id)
        if fusions.empty:
            st.info("No fusion records for this graph (no ir_post_fusion.txt was ingested).")
        else:
            fused = fusions[fusions["member_count"] > 1]
            st.write(f"{len(fusions):,} scheduler nodes after fusion; {len(fused):,} of them fused "
                     f"{int(fused['member_count'].sum()):,} nodes.")
            cells.table(fusions)
        chrome.show_sql("explore/fusions")



def show_compile_events(run_id: str, r) -> None:
    """The run's compile events, or why there are none: none happened, or no file of the run records
    them; then what its unknown_* rows say (they are notes, not events)."""
    events = data.run("explore/compile_events", run_id=run_id)
    notes = data.run("explore/unknown_counts", run_id=run_id)
    unknown = [name for key, name in EVENT_COUNTS.items() if cells.or_missing(r[key], "") == ""]
    # the unknown counts a note below explains; the others no file of the run records
    explained = {EVENT_COUNTS[n.metric] for n in notes.itertuples() if cells.or_missing(n.counted, "") == ""}
    unrecorded = [name for name in unknown if name not in explained]
    if cells.or_missing(r["compile_events"], "") == "":
        st.info("This run holds no file that records graph breaks, recompiles, restarts or failures (a profile, a "
                "TORCH_COMPILE_DEBUG tree, torch-spyre files, TORCH_LOGS without their loggers' lines): they are "
                "unknown, not 0.")
        unrecorded = []
    elif events.empty:
        known = [name for name in EVENT_COUNTS.values() if name not in unknown]
        st.info(f"No {_listed(known, 'or')} in this run." + (f" Its {_listed(unknown, 'and')} are unknown." if unknown else ""))
    else:
        cells.table(events)
    if unrecorded:
        st.caption(f"Its {_listed(unrecorded, 'and')} are unknown: no file of the run records them.")
    for note in notes.itertuples():
        name = EVENT_COUNTS[note.metric]
        where = f" ({plural(int(note.rows), 'compile')})" if note.rows > 1 else ""
        said = cells.or_missing(note.reason, "the log cannot tell them")
        reason = cells.plain(said[:1].upper() + said[1:])
        if cells.or_missing(note.counted, "") == "":
            st.caption(f"{name.capitalize()} unknown{where}: {cells.plain(said)}.")
        else:
            st.caption(f"{reason}{where}; its {name}, {int(note.counted):,}, are counted from "
                       f"{cells.plain(note.counted_by)}.")


def _listed(words: list[str], conjunction: str) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {conjunction} {words[-1]}"


def table_or_note(name: str, empty: str, **params) -> None:
    """A graph's query as a table, or a note saying why it has no rows; then its SQL."""
    frame = data.run(name, **params)
    if frame.empty:
        st.info(empty)
    else:
        cells.table(frame)
    chrome.show_sql(name)


with tab_layouts:
    if graph_id and tab_layouts.open:
        table_or_note("explore/layouts", "No buffer layouts recorded for this graph.", run_id=run_id, graph_id=graph_id)

with tab_lineage:
    if graph_id and tab_lineage.open:
        st.markdown("**The run's model lines and the kernels each became**")
        by_line = data.run("lineage/source_line_kernels", run=run_id)
        if by_line.empty:
            st.info(provenance.NO_PROVENANCE)
        else:
            by_line.insert(0, "viewer", [viewer_url(run_id, gs[0] if len(gs) else None, line=f"{f}:{n}")
                                         for f, n, gs in zip(by_line["file"], by_line["line"], by_line["graphs"],
                                                             strict=True)])
            cells.table(by_line, column_config={"viewer": VIEWER_COLUMN})
        chrome.show_sql("lineage/source_line_kernels")
        st.markdown(f"**Lineage of graph {cells.plain(graph_id)}**: model line, node, post-grad node, kernel")
        table_or_note("explore/lineage", "No lineage for this graph (no provenance tracking file was ingested).",
                      run_id=run_id, graph_id=graph_id)

with tab_events:
    if tab_events.open:
        show_compile_events(run_id, r)
        compilations = data.run("explore/compilations", run_id=run_id)
        if compilations.empty:
            st.caption("No compilation metrics: this run's TORCH_TRACE log holds no compilation_metrics record "
                       "(torch 2.3 writes none)." if r["trace_logs"] else
                       "No compilation metrics (this run has no TORCH_TRACE log).")
        else:
            st.markdown("**Compilations**")
            cells.table(compilations)
        chrome.show_sql("explore/compile_events", "explore/unknown_counts", "explore/compilations")
