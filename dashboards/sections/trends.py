"""Trends: how fusion rate, kernel count, compile failures, graph breaks and compile time move across
releases, one line per workload."""

import colorsys

import streamlit as st

from inductor_warehouse.analysis.words import plural
from inductor_warehouse.dashboards import data, filters, state
from inductor_warehouse.dashboards.navigation import open_run_button

# (column, chart title); a chart whose metric no run in view has is left out with a line saying so
METRICS = {
    "fusion_rate": "Fusion rate",
    "kernels": "Generated kernels",
    "failures": "Compile failures",
    "graph_breaks": "Graph breaks",
    "recompiles": "Recompiles",
    "compile_s": "Compile time (s)",
}
# what a chart's points carry: axes, colour and tooltip
TOOLTIP = {"series": "nominal", "compiler_version": "nominal", "started_at": "temporal",
           "fusion_rate": "quantitative", "kernels": "quantitative", "failures": "quantitative",
           "fallbacks": "quantitative", "graph_breaks": "quantitative", "uncounted_breaks": "quantitative",
           "recompiles": "quantitative", "compile_s": "quantitative",
           "run_id": "nominal"}
CHART_COLUMNS = [*TOOLTIP, "workload"]
COUNTS = {"kernels", "failures", "graph_breaks", "recompiles"}
SHOWN_AT_FIRST = 10  # workloads charted before the reader picks: each gets a colour of its own
PLOT_HEIGHT = 240  # the plot's own height: the legend goes below it
# Tableau 10: distinct at a glance; more series get evenly spaced hues (palette)
TABLEAU = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac"]


def palette(n: int) -> list[str]:
    """n colours, none repeated: Tableau 10 for up to 10, else n hues evenly spaced around the circle,
    alternately darker and lighter so that neighbours differ in lightness too."""
    if n <= len(TABLEAU):
        return TABLEAU[:n]
    out = []
    for i in range(n):
        r, g, b = colorsys.hls_to_rgb(i / n, 0.42 if i % 2 else 0.62, 0.65)
        out.append(f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}")
    return out


def trend_chart(x: dict, metric: str, title: str, colour: dict) -> dict:
    """A Vega-Lite spec: each workload's median per x as a line, its runs as points to pick. The legend
    sits under the plot (the plot keeps the column's width) and picks a workload to bring forward.
    Written as the spec itself: Altair would validate every sorted version of every layer, on every render."""
    y = {"field": metric, "type": "quantitative", "title": title}
    if metric in COUNTS:
        y["axis"] = {"tickMinStep": 1, "format": "d"}  # counts: no 0.5 failures
    focus = {"condition": {"param": "focus", "empty": True, "value": 1.0}, "value": 0.12}
    # fit-x: the chart takes the column's width, and its plot PLOT_HEIGHT whatever the legend's height
    return {"height": PLOT_HEIGHT, "autosize": {"type": "fit-x", "contains": "padding"}, "layer": [
        {"mark": {"type": "line", "strokeWidth": 2},
         "params": [{"name": "focus", "select": {"type": "point", "fields": ["series"]}, "bind": "legend"}],
         "encoding": {"x": x, "y": {**y, "aggregate": "median"}, "color": colour,
                      "detail": {"field": "series", "type": "nominal"},
                      "opacity": {"condition": {"param": "focus", "empty": True, "value": 0.7}, "value": 0.08}}},
        {"mark": {"type": "circle", "size": 70},
         "params": [{"name": "pick", "select": {"type": "point", "fields": ["run_id"]}}],
         "encoding": {"x": x, "y": y, "color": colour,
                      "tooltip": [{"field": f, "type": t} for f, t in TOOLTIP.items()],
                      "opacity": focus}},
    ]}


st.title("Trends")
st.caption("How do fusion rate, kernel count, compile failures, graph breaks and compile time of each workload "
           "move across compiler versions and dates? One line per workload; click a point to pick its run, "
           "a legend entry to bring its workload forward.")
data.stop_if_empty()
points = data.run("dashboard/trend_points", **filters.current())
if points.empty:
    st.warning(f"No runs match the filters ({filters.describe()}).")
    st.stop()
if points["compiler_version"].nunique() < 2 and points["started_at"].nunique() < 2:
    st.info("Only one compiler version and one date in view: a trend needs runs of at least two. "
            "The points below are the runs there are.")

left, right = st.columns([1, 3])
state.from_url("trend_axis", "axis", ["compiler version", "date"])
with left:
    axis = st.segmented_control("Across", ["compiler version", "date"], default="compiler version",
                                key="trend_axis") or "compiler version"
state.to_url("axis", None if axis == "compiler version" else axis)
versions = (points.sort_values("version_rank")["compiler_version"].dropna().unique().tolist())
if axis == "date":
    x = {"field": "started_at", "type": "temporal", "title": "run started"}
else:
    x = {"field": "compiler_version", "type": "ordinal", "title": "compiler version", "sort": versions,
         "axis": {"labelAngle": 0, "labelOverlap": True}}
    unversioned = points["compiler_version"].isna().sum()
    if unversioned:
        st.caption(f"Runs without a compiler version ({unversioned:,}) are left out; switch to date to see them.")
        points = points.dropna(subset=["compiler_version"])
points = points.assign(series=[data.workload_name(w) for w in points["workload"]])
# the workloads with the most runs first: those a trend says most about
by_runs = points.groupby("series").size().sort_values(ascending=False, kind="stable")
everyone = sorted(by_runs.index)
state.from_url("trend_series", "series", everyone, many=True)
kept = [s for s in st.session_state.get("trend_series", []) if s in everyone]
# the first time, or when the filters leave none of the workloads picked: the most runs first
st.session_state["trend_series"] = kept or sorted(by_runs.index[:SHOWN_AT_FIRST])
with right:
    chosen = st.multiselect(f"Workloads ({len(everyone):,} in view)", everyone, key="trend_series",
                            placeholder="every workload",
                            help="Each workload is a line of its own colour. Clear to chart them all.")
state.to_url("series", chosen if sorted(chosen) != sorted(by_runs.index[:SHOWN_AT_FIRST]) else None)
shown_series = sorted(chosen) or everyone
charted = points[points["series"].isin(shown_series)]
if len(shown_series) < len(everyone):
    st.caption(f"Charting {plural(len(shown_series), 'workload')} of {len(everyone):,} (the most runs first); "
               "pick others above.")
colour = {"field": "series", "type": "nominal", "title": "workload",
          "scale": {"domain": shown_series, "range": palette(len(shown_series))},
          "legend": {"orient": "bottom", "direction": "horizontal", "columns": 3, "symbolLimit": 0,
                     "labelLimit": 190, "columnPadding": 12, "title": None}}

picked = None
for metric, title in METRICS.items():
    shown = charted.dropna(subset=[metric])
    if shown.empty or (metric != "fusion_rate" and metric != "compile_s" and not shown[metric].any()):
        st.caption(f"**{title}**: none in the runs charted.")
        continue
    st.markdown(f"**{title}**")
    event = st.vega_lite_chart(shown[CHART_COLUMNS], trend_chart(x, metric, title, colour), on_select="rerun",
                               selection_mode="pick", key=f"trend_{metric}", height="content", width="stretch")
    chosen_points = (event.selection.get("pick") or []) if event else []
    if chosen_points and chosen_points[0].get("run_id"):
        picked = chosen_points[0]["run_id"]

st.subheader("Open a run")
runs = points.sort_values(["model", "version_rank", "started_at"])
# timestamps as text in one step: a Timestamp object a row is slow on a large warehouse
started = runs["started_at"].astype(str).where(runs["started_at"].notna(), None)
labels = {r[-1]: " · ".join(map(data.shown, r))
          for r in zip(runs["series"], runs["compiler_version"], started, runs["run_id"], strict=True)}
if picked in labels:
    st.session_state["trend_run"] = picked
run_id = st.selectbox("Run", list(labels), format_func=labels.get, key="trend_run",
                      index=None, placeholder="pick a point above, or choose here")
open_run_button(run_id, "trend_open")
with st.expander(f"The {len(points):,} runs behind the charts"):
    data.table(points.drop(columns=["version_rank", "series"]))
data.show_sql("dashboard/trend_points")
