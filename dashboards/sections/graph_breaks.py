"""Graph breaks and recompiles: which reasons cost the most, across all runs, and where they happen."""

import streamlit as st

from dashboards import data, filters
from dashboards.navigation import open_run_button

KINDS = {"graph_break": "Graph breaks", "recompile": "Recompiles", "restart": "Restarts", "failure": "Failures"}

st.title("Graph breaks & recompiles")
st.caption("Why does Dynamo break graphs or recompile, how often, in which models and releases, "
           "and in which runs and user lines?")
data.stop_if_empty()
f = filters.current()

counts = data.run("dashboard/break_counts", **f).set_index("kind")
cols = st.columns(len(KINDS))
for col, (kind, label) in zip(cols, KINDS.items(), strict=False):
    events = counts["events"].get(kind, 0)
    runs = counts["runs"].get(kind, 0)
    col.metric(label, f"{int(events):,}", help=f"in {int(runs):,} runs", delta=None)
if counts.empty:
    st.success(f"No graph breaks, recompiles, restarts or failures were recorded in the runs in view "
               f"({filters.describe()}). Runs without a TORCH_TRACE log or TORCH_LOGS output record none.")
    data.show_sql("dashboard/break_counts")
    st.stop()

present = [k for k in KINDS if k in counts.index]
kind = st.segmented_control("Kind", present, format_func=KINDS.get, default=present[0], key="breaks_kind") \
    or present[0]
reasons = data.run("dashboard/break_reasons", **f, kind=kind)
st.subheader(f"{KINDS[kind]}: reasons ranked")
event = st.dataframe(reasons, hide_index=True, width="stretch", on_select="rerun",
                     selection_mode="single-row", key="breaks_reasons_table")
data.show_sql("dashboard/break_counts", "dashboard/break_reasons")

rows = event.selection.rows if event else []
if rows:
    st.session_state["breaks_reason"] = reasons.iloc[rows[0]]["reason"]
choices = reasons["reason"].tolist()
if st.session_state.get("breaks_reason") not in choices:
    st.session_state["breaks_reason"] = choices[0]
reason = st.selectbox("Drill into the runs of", choices, key="breaks_reason")
runs = data.run("dashboard/break_runs", **f, kind=kind, reason=reason)
st.dataframe(runs, hide_index=True, width="stretch")
labels = {r.run_id: f"{r.model} · {r.compiler_version} · {r.run_id}" for r in runs.itertuples()}
run_id = st.selectbox("Run", list(labels), format_func=labels.get, key="breaks_run", index=None,
                      placeholder="choose a run to open")
open_run_button(run_id, "breaks_open")
with st.expander("Full reason text"):
    st.code(runs["reason"].iloc[0] if len(runs) else reason, language=None, wrap_lines=True)
data.show_sql("dashboard/break_runs")
