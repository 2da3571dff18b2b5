"""Trends: how fusion rate, kernel count, graph breaks and compile time move across releases."""

import json

import altair as alt
import streamlit as st

from dashboards import data, filters
from dashboards.navigation import open_run_button

# A line joins runs of one workload only: the same model on the same device, mode, dtype and variant
# (a CPU run and a GPU run of one model are different series, never one line).
WORKLOAD_LABELS = ("mode", "dtype", "variant")


def series_name(model: str | None, device: str | None, labels) -> str:
    labels = json.loads(labels) if isinstance(labels, str) else (labels if isinstance(labels, dict) else {})
    parts = [data.shown(model, "no model"), data.shown(device, "device unknown")]
    return " · ".join(parts + [str(labels[k]) for k in WORKLOAD_LABELS if labels.get(k) is not None])


METRICS = {
    "fusion_rate": "Fusion rate",
    "kernels": "Generated kernels",
    "graph_breaks": "Graph breaks",
    "compile_s": "Compile time (s)",
}

st.title("Trends")
st.caption("How do fusion rate, kernel count, graph breaks and compile time of each model move "
           "across compiler versions and dates? Click a point to pick its run.")
data.stop_if_empty()
points = data.run("dashboard/trend_points", **filters.current())
if points.empty:
    st.warning(f"No runs match the filters ({filters.describe()}).")
    st.stop()
if points["compiler_version"].nunique() < 2 and points["started_at"].nunique() < 2:
    st.info("Only one compiler version and one date in view: a trend needs runs of at least two. "
            "The points below are the runs there are.")

axis = st.segmented_control("Across", ["compiler version", "date"], default="compiler version", key="trend_axis")
versions = (points.sort_values("version_rank")["compiler_version"].dropna().unique().tolist())
if axis == "date":
    x = alt.X("started_at:T", title="run started")
else:
    x = alt.X("compiler_version:O", title="compiler version", sort=versions, axis=alt.Axis(labelAngle=0))
    unversioned = points["compiler_version"].isna().sum()
    if unversioned:
        st.caption(f"Runs without a compiler version ({unversioned:,}) are left out; switch to date to see them.")
        points = points.dropna(subset=["compiler_version"])
points = points.assign(series=[series_name(r.model, r.device, r.labels) for r in points.itertuples()])
series = sorted(points["series"].unique())
# one colour per workload on every chart, whichever metrics it lacks
colour = alt.Color("series:N", title="model · device · workload", scale=alt.Scale(domain=series),
                   legend=alt.Legend(columns=1 + len(series) // 12, symbolLimit=0, labelLimit=300))
tooltip = ["model", "compiler_version", "device", "started_at", "fusion_rate", "kernels", "graph_breaks",
           "compile_s", "run_id"]

picked = None
for metric, title in METRICS.items():
    shown = points.dropna(subset=[metric])
    st.markdown(f"**{title}**")
    if shown.empty:
        st.caption(f"No run in view has a {title.lower()}.")
        continue
    pick = alt.selection_point(fields=["run_id"], name="pick")
    base = alt.Chart(shown).encode(x=x, y=alt.Y(f"{metric}:Q", title=title), color=colour)
    line = base.mark_line(opacity=0.4).encode(
        y=alt.Y(f"median({metric}):Q", title=title), detail="series:N")
    dots = base.mark_circle(size=70).encode(
        tooltip=tooltip, opacity=alt.condition(pick, alt.value(1.0), alt.value(0.35))).add_params(pick)
    event = st.altair_chart(line + dots, on_select="rerun", selection_mode="pick", key=f"trend_{metric}",
                            height=340, width="stretch")
    chosen = (event.selection.get("pick") or []) if event else []
    if chosen and chosen[0].get("run_id"):
        picked = chosen[0]["run_id"]

st.subheader("Open a run")
runs = points.sort_values(["model", "version_rank", "started_at"])
labels = {r.run_id: " · ".join(data.shown(v) for v in (r.model, r.compiler_version, r.device, r.started_at, r.run_id))
          for r in runs.itertuples()}
if picked in labels:
    st.session_state["trend_run"] = picked
run_id = st.selectbox("Run", list(labels), format_func=labels.get, key="trend_run",
                      index=None, placeholder="pick a point above, or choose here")
open_run_button(run_id, "trend_open")
with st.expander(f"The {len(points):,} runs behind the charts"):
    st.dataframe(points.drop(columns=["version_rank"]), hide_index=True, width="stretch")
data.show_sql("dashboard/trend_points")
