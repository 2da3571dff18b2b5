"""Trends: how fusion rate, kernel count, graph breaks and compile time move across releases."""

import json

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

# what a chart's points carry: axes, colour and tooltip
TOOLTIP = {"model": "nominal", "compiler_version": "nominal", "device": "nominal", "started_at": "temporal",
           "fusion_rate": "quantitative", "kernels": "quantitative", "graph_breaks": "quantitative",
           "compile_s": "quantitative", "run_id": "nominal"}
CHART_COLUMNS = [*TOOLTIP, "series"]


def trend_chart(x: dict, metric: str, title: str, colour: dict) -> dict:
    """A Vega-Lite spec: each workload's median per x as a line, its runs as points to pick. Written
    as the spec itself: Altair validates every sorted version of every layer, 0.4 s a page at 500 versions."""
    y = {"field": metric, "type": "quantitative", "title": title}
    return {"layer": [
        {"mark": {"type": "line", "opacity": 0.4},
         "encoding": {"x": x, "y": {**y, "aggregate": "median"}, "color": colour,
                      "detail": {"field": "series", "type": "nominal"}}},
        {"mark": {"type": "circle", "size": 70},
         "params": [{"name": "pick", "select": {"type": "point", "fields": ["run_id"]}}],
         "encoding": {"x": x, "y": y, "color": colour,
                      "tooltip": [{"field": f, "type": t} for f, t in TOOLTIP.items()],
                      "opacity": {"condition": {"param": "pick", "value": 1.0}, "value": 0.35}}},
    ]}


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
    x = {"field": "started_at", "type": "temporal", "title": "run started"}
else:
    x = {"field": "compiler_version", "type": "ordinal", "title": "compiler version", "sort": versions,
         "axis": {"labelAngle": 0}}
    unversioned = points["compiler_version"].isna().sum()
    if unversioned:
        st.caption(f"Runs without a compiler version ({unversioned:,}) are left out; switch to date to see them.")
        points = points.dropna(subset=["compiler_version"])
# zip over three columns: itertuples would turn every timestamp of every row into Python first
points = points.assign(series=[series_name(*r) for r in zip(points["model"], points["device"], points["labels"],
                                                             strict=True)])
series = sorted(points["series"].unique())
# one colour per workload on every chart, whichever metrics it lacks
colour = {"field": "series", "type": "nominal", "title": "model · device · workload", "scale": {"domain": series},
          "legend": {"columns": 1 + len(series) // 12, "symbolLimit": 0, "labelLimit": 300}}

picked = None
for metric, title in METRICS.items():
    shown = points.dropna(subset=[metric])
    st.markdown(f"**{title}**")
    if shown.empty:
        st.caption(f"No run in view has a {title.lower()}.")
        continue
    event = st.vega_lite_chart(shown[CHART_COLUMNS], trend_chart(x, metric, title, colour), on_select="rerun",
                               selection_mode="pick", key=f"trend_{metric}", height=340, width="stretch")
    chosen = (event.selection.get("pick") or []) if event else []
    if chosen and chosen[0].get("run_id"):
        picked = chosen[0]["run_id"]

st.subheader("Open a run")
runs = points.sort_values(["model", "version_rank", "started_at"])
# timestamps as text in one step: one Timestamp object a row costs 0.1 s at 5,000 runs
started = runs["started_at"].astype(str).where(runs["started_at"].notna(), None)
labels = {r[-1]: " · ".join(map(data.shown, r))
          for r in zip(runs["model"], runs["compiler_version"], runs["device"], started, runs["run_id"], strict=True)}
if picked in labels:
    st.session_state["trend_run"] = picked
run_id = st.selectbox("Run", list(labels), format_func=labels.get, key="trend_run",
                      index=None, placeholder="pick a point above, or choose here")
open_run_button(run_id, "trend_open")
with st.expander(f"The {len(points):,} runs behind the charts"):
    st.dataframe(points.drop(columns=["version_rank"]), hide_index=True, width="stretch")
data.show_sql("dashboard/trend_points")
