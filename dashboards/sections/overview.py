"""Overview: what is in the warehouse, the latest numbers per workload, and whether ingest went well."""

import streamlit as st

from inductor_warehouse.analysis.words import plural
from inductor_warehouse.dashboards import cells, chrome, data, filters

st.title("Overview")
st.caption("What is in the warehouse, where does each workload stand now, and did ingest go well?")
chrome.stop_if_empty()
f = filters.current()

counts = data.run("dashboard/overview_counts", **f).iloc[0]
if counts["runs"] == 0 and not counts["harness_result_runs"]:
    st.warning(f"No runs match the filters ({filters.describe()}).")
    st.stop()
cols = st.columns(8)
for col, (label, key) in zip(cols, [
    ("Runs", "runs"), ("Workloads", "workloads"), ("Models", "models"), ("Compilers", "compiler_versions"),
    ("Graphs", "graphs"), ("Kernels", "kernels"), ("Extern calls", "extern_calls"), ("Ingest errors", "ingest_errors"),
], strict=False):
    # labels that fit an eighth of the main column at 1280 px ("Compiler versions" was cut)
    col.metric(label, cells.number(counts[key]), help="compiler versions (builds)" if label == "Compilers" else None)
if counts["graphs_unknown_runs"] or counts["kernels_unknown_runs"]:
    n = int(max(counts["graphs_unknown_runs"], counts["kernels_unknown_runs"]))
    known = "" if cells.or_missing(counts["kernels"], "") == "" else " summed over the runs whose files tell them;"
    st.caption(f"Graphs, kernels and extern calls:{known} unknown, not 0, in {plural(n, 'run')} (a profile or "
               "TORCH_LOGS output alone, a run killed before Inductor wrote its code).")
if counts["harness_result_runs"]:
    n = int(counts["harness_result_runs"])
    st.caption(f"Runs are compiles. Beside them, {plural(n, 'run')} {'holds' if n == 1 else 'hold'} a benchmark "
               "harness's results and compiled nothing (a job's CSVs, CI's expected values): the Benchmark suite "
               "page reads them.")
if counts["runs"] == 1:
    st.info("One run in view: Trends and Compare need runs of at least two compiler versions or dates.")
runs = int(counts["runs"])
timed = int(counts["runs_with_kernel_times"])
profiles = [f"{plural(timed, 'run')} of {runs:,} {'has' if timed == 1 else 'have'} profiled kernel times"]
if counts["runs_profile_without_kernels"]:
    n = int(counts["runs_profile_without_kernels"])
    profiles.append(f"{plural(n, 'run')} {'has a profile' if n == 1 else 'have a profile'} without kernel events "
                    "(CPU runs: the profiler records CPU ops, not Inductor's C++ kernels)")
if counts["runs_without_profile"]:
    n = int(counts["runs_without_profile"])
    profiles.append(f"{plural(n, 'run')} {'has' if n == 1 else 'have'} no profile")
st.caption("; ".join(profiles) + ".")
if counts["runs_with_failures"]:
    n = int(counts["runs_with_failures"])
    st.warning(f"{plural(n, 'run')} failed to compile some frame (the Graph breaks & recompiles page lists the "
               "failures; Compare calls a new one a regression).")

st.subheader("Compiler versions and devices")
cells.table(data.run("dashboard/overview_versions", **f))

st.subheader("Latest fusion rate and kernel count per workload")
st.caption("The latest run of each workload (model, mode, dtype, variant, batch, device, harness run): the newest compiler "
           "release, then build, then start time. Fusion rate = 1 − post-fusion nodes / pre-fusion nodes: the "
           "share of scheduler nodes that fusion merged away. A blank cell is unknown: the run holds no file it is "
           "read from.")
PAGE = 200
latest = data.run("dashboard/latest_per_workload", **f, limit=PAGE, offset=chrome.page_offset("overview_page", PAGE))
# the workload's name holds its model and device: the columns that answer (fusion rate, kernels) fit at 1280 px
shown = latest.drop(columns=["total", "model", "device", "latest_run_at", "graphs"]).assign(
    workload=latest["workload"].map(cells.workload_name))
cells.table(shown,
           column_config={"workload": st.column_config.TextColumn("workload", width="medium"),
                          "latest_run_id": st.column_config.TextColumn("latest run", width="small"),
                          "latest_compiler": st.column_config.TextColumn("compiler"),
                          "fusion_rate": st.column_config.ProgressColumn("fusion rate", format="percent",
                                                                         min_value=0.0, max_value=1.0)})
chrome.pager(latest["total"].max() if len(latest) else 0, PAGE, "overview_page")
chrome.show_sql("dashboard/overview_counts", "dashboard/overview_versions", "dashboard/latest_per_workload")

st.subheader("Ingest health")
if counts["ingest_errors"] == 0:
    st.success("No problems were recorded while ingesting these runs.")
else:
    st.write(f"{plural(int(counts['ingest_errors']), 'problem')} in {plural(int(counts['runs_with_errors']), 'run')}.")
    cells.table(data.run("dashboard/ingest_health", **f))
    cells.table(data.run("dashboard/ingest_errors", **f, limit=100, offset=chrome.page_offset("overview_errors_page", 100)))
    chrome.pager(int(counts["ingest_errors"]), 100, "overview_errors_page")
chrome.show_sql("dashboard/ingest_health", "dashboard/ingest_errors")
