"""Overview: what is in the warehouse, the latest numbers per model, and whether ingest went well."""

import streamlit as st

from dashboards import data, filters

st.title("Overview")
st.caption("What is in the warehouse, where does each model stand now, and did ingest go well?")
data.stop_if_empty()
f = filters.current()

counts = data.run("dashboard/overview_counts", **f).iloc[0]
if counts["runs"] == 0:
    st.warning(f"No runs match the filters ({filters.describe()}).")
    st.stop()
cols = st.columns(8)
for col, (label, key) in zip(cols, [
    ("Runs", "runs"), ("Models", "models"), ("Compiler versions", "compiler_versions"), ("Devices", "devices"),
    ("Graphs", "graphs"), ("Kernels", "kernels"), ("Extern calls", "extern_calls"), ("Ingest errors", "ingest_errors"),
], strict=False):
    col.metric(label, f"{int(counts[key]):,}")
if counts["runs"] == 1:
    st.info("One run in view: Trends and Compare need runs of at least two compiler versions or dates.")
if counts["runs_without_profile"]:
    st.caption(f"{int(counts['runs_without_profile']):,} of {int(counts['runs']):,} runs have no profiler "
               "trace: their kernel times are empty.")

st.subheader("Compiler versions and devices")
st.dataframe(data.run("dashboard/overview_versions", **f), hide_index=True, width="stretch")

st.subheader("Latest fusion rate and kernel count per model")
st.caption("The newest run of each model on each device. Fusion rate = 1 − post-fusion nodes / "
           "pre-fusion nodes: the share of scheduler nodes that fusion merged away.")
PAGE = 200
latest = data.run("dashboard/latest_per_model", **f, limit=PAGE, offset=data.page_offset("overview_page", PAGE))
st.dataframe(
    latest.drop(columns="total"), hide_index=True, width="stretch",
    column_config={"fusion_rate": st.column_config.ProgressColumn("fusion rate", format="%.3f",
                                                                  min_value=0.0, max_value=1.0)},
)
data.pager(latest["total"].max() if len(latest) else 0, PAGE, "overview_page")
data.show_sql("dashboard/overview_counts", "dashboard/overview_versions", "dashboard/latest_per_model")

st.subheader("Ingest health")
if counts["ingest_errors"] == 0:
    st.success("No problems were recorded while ingesting these runs.")
else:
    st.write(f"{int(counts['ingest_errors']):,} problems in {int(counts['runs_with_errors']):,} runs.")
    st.dataframe(data.run("dashboard/ingest_health", **f), hide_index=True, width="stretch")
    st.dataframe(data.run("dashboard/ingest_errors", **f, limit=100,
                          offset=data.page_offset("overview_errors_page", 100)),
                 hide_index=True, width="stretch")
    data.pager(int(counts["ingest_errors"]), 100, "overview_errors_page")
data.show_sql("dashboard/ingest_health", "dashboard/ingest_errors")
