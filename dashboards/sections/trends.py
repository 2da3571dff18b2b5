"""Trends: how fusion rate, kernel count, compile failures, graph breaks and compile time move across
releases, one line per workload."""

import streamlit as st

from inductor_warehouse.analysis.words import plural
from inductor_warehouse.dashboards import cells, chrome, data, filters, state, unknowns
from inductor_warehouse.dashboards.navigation import open_run_button
from inductor_warehouse.dashboards.palette import palette

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
           "recompiles": "quantitative", "compile_s": "quantitative", "cache": "nominal",
           "run_id": "nominal"}
CHART_COLUMNS = [*TOOLTIP, "workload"]
# each metric's value of a run's point (its workload at its compiler version) by the metric's one rule
POINT_COLUMNS = {m: f"{m}_point" for m in METRICS}
COUNTS = {"kernels", "failures", "graph_breaks", "recompiles"}
# what a line goes through at a point whose runs differ (views/06_point_values.sql's rules)
POINT_RULE = {"fusion_rate": "the rate of its runs' node counts, each their lower median",
              **{m: "the lower median of its runs" for m in COUNTS}}
SHOWN_AT_FIRST = 10  # workloads charted before the reader picks: each gets a colour of its own
PLOT_HEIGHT = 240  # the plot's own height: the legend goes below it


def legend_columns(names: list[str], width_px: int = 760, char_px: float = 6.0) -> int:
    """Legend columns for names shown whole (a cut name can read as another workload's): as many as
    the longest name fits across the main column of a 1280 px screen, at most 3."""
    longest = max((len(n) for n in names), default=0) * char_px + 30  # the symbol and column padding
    return max(1, min(3, int(width_px // longest)))


def trend_chart(x: dict, metric: str, title: str, colour: dict, line: str | None = None) -> dict:
    """A Vega-Lite spec: each workload's line through the value of its runs at each x by the metric's
    one rule (the `line` column, dashboard/trend_points' `<metric>_point`: drawn as it is, never
    aggregated again here), its runs as points to pick; without `line`, through its runs themselves
    (each run its own x: a date). The legend sits under the plot (the plot keeps the column's width) and
    picks a workload to bring forward.
    Written as the spec itself: Altair would validate every sorted version of every layer, on every render."""
    y = {"field": metric, "type": "quantitative", "title": title}
    if metric in COUNTS:
        y["axis"] = {"tickMinStep": 1, "format": "d"}  # type: ignore[assignment]  # counts: no 0.5 failures
    focus = {"condition": {"param": "focus", "empty": True, "value": 1.0}, "value": 0.12}
    # fit-x: the chart takes the column's width, and its plot PLOT_HEIGHT whatever the legend's height
    return {"height": PLOT_HEIGHT, "autosize": {"type": "fit-x", "contains": "padding"}, "layer": [
        {"mark": {"type": "line", "strokeWidth": 2},
         "params": [{"name": "focus", "select": {"type": "point", "fields": ["series"]}, "bind": "legend"}],
         # the rows come in x's order (release order): the path follows them, not x's values as text
         "encoding": {"x": x, "y": {**y, "field": line or metric}, "color": colour, "order": {"value": None},
                      "detail": {"field": "series", "type": "nominal"},
                      "opacity": {"condition": {"param": "focus", "empty": True, "value": 0.7}, "value": 0.08}}},
        {"mark": {"type": "circle", "size": 70},
         "params": [{"name": "pick", "select": {"type": "point", "fields": ["run_id"]}}],
         "encoding": {"x": x, "y": y, "color": colour,
                      "tooltip": [{"field": f, "type": t} for f, t in TOOLTIP.items()],
                      "opacity": focus}},
    ]}


def off_line_note(rows, metric: str, line: str) -> str | None:
    """A line goes through one value a point: where the runs of a point differ, which of their dots
    are off it, and what the line is drawn from; None where every dot is on its line."""
    off = rows[(rows[metric] - rows[line]).abs() > 5e-5]
    if off.empty:
        return None
    where = off.drop_duplicates(["series", "compiler_version"])
    names = ", ".join(f"{s} · {v}" for s, v in zip(where["series"], where["compiler_version"], strict=True))
    return (f"{plural(len(off), 'run')} {'is a dot' if len(off) == 1 else 'are dots'} off its line, where the runs of "
            f"a point differ ({cells.plain(names)}): a line goes through each point's one value, {POINT_RULE[metric]}, "
            "as `iwh compare` takes a side's.")


def cache_note(rows, lines: bool) -> str:
    """What the compile time chart's lines go through, and which of its points are cache loads."""
    loaded = rows[rows["cache"] != "compiled"]
    text = ("Each line goes through the least compile time of its point's compiled runs (caches off or cold), "
            "as `iwh compare` takes it: a run that loaded its graphs from a warm cache measured loading, not "
            "compiling (the *cache* of a point's tooltip)." if lines else
            "A run that loaded its graphs from a warm cache measured loading, not compiling (the *cache* of a "
            "point's tooltip).")
    if loaded.empty:
        return text
    text += f" {plural(len(loaded), 'run')} charted loaded from a warm cache"
    alone = rows[rows["compile_cache_point"] != "compiled"].drop_duplicates(["series", "compiler_version"])
    if lines and len(alone):
        names = ", ".join(f"{s} · {v}" for s, v in zip(alone["series"], alone["compiler_version"], strict=True))
        return text + f"; where a point has no compiled run its line goes through its warm runs: {cells.plain(names)}."
    return text + (": each is a point off its line." if lines else ".")


VIEWS = {"each workload": None, "a suite (geomean)": "suite"}
SUITE_METRICS = {"kernels": "Generated kernels (geomean a workload)", "fusion_rate": "Fusion rate (geomean)",
                 "compile_s": "Compile time, s (geomean a workload)"}
OUTLIERS = 10  # workloads listed a metric: those that moved most against their suite


def suite_view(axis: str) -> None:
    """A suite as one line a metric: the geomean over its workloads at each point (dashboard/suite_trend),
    and the workloads whose step from the point before is furthest from the suite's."""
    rows = data.run("dashboard/suite_trend", axis="date" if axis == "date" else "compiler", **filters.current())
    rows = rows.assign(series=[f"{s} · {cells.or_missing(d, 'device unknown')}" for s, d in zip(rows["suite"], rows["device"],
                                                                                        strict=True)])
    suites = sorted(rows["series"].unique())
    if not suites:
        st.info("No run in view belongs to a suite: a run's suite is its `suite` label, or that of the benchmark "
                "harness rows that measured it.")
        chrome.show_sql("dashboard/suite_trend")
        return
    state.from_url("trend_suite", "suite", suites)
    suite = st.selectbox("Suite", suites, key="trend_suite")
    state.to_url("suite", suite)
    rows = rows[rows["series"] == suite]
    order = rows.drop_duplicates("point").sort_values("position")["point"].tolist()
    x = {"field": "point", "type": "ordinal", "sort": order, "title": axis, "axis": {"labelAngle": 0, "labelOverlap": True}}
    for metric, title in SUITE_METRICS.items():
        line = rows[rows["metric"] == metric].drop_duplicates("point")[["point", "geomean", "workloads"]]
        if line.empty:
            st.caption(f"**{title}**: none in the runs of {cells.plain(suite)}.")
            continue
        st.markdown(f"**{title}**: {cells.plain(suite)}, {plural(int(line['workloads'].max()), 'workload')} at most a point")
        st.vega_lite_chart(line, {"height": PLOT_HEIGHT, "autosize": {"type": "fit-x", "contains": "padding"},
                                  "mark": {"type": "line", "point": True, "strokeWidth": 2.5},
                                  "encoding": {"x": x, "y": {"field": "geomean", "type": "quantitative", "title": title,
                                                             "scale": {"zero": False}},
                                               "tooltip": [{"field": "point"}, {"field": "geomean", "format": ".4~f"},
                                                           {"field": "workloads"}]}},
                           width="stretch", key=f"suite_trend_{metric}")
        if metric == "compile_s":
            loaded = rows[(rows["metric"] == metric) & (rows["cache"] != "compiled")]
            st.caption("A workload's compile time at a point is the least of its compiled runs there (caches off "
                       "or cold): a run that loaded its graphs from a warm cache measured loading, not compiling."
                       + (" Of warm-cache runs alone, with no step to or from them: "
                          + cells.plain(", ".join(f"{cells.workload_name(w)} · {p}" for w, p in
                                                  zip(loaded["workload"], loaded["point"], strict=True))) + "."
                          if len(loaded) else ""))
        moved = rows[(rows["metric"] == metric) & (rows["outlier"] > 0)].nlargest(OUTLIERS, "outlier")
        if len(moved):
            cells.table(moved.assign(workload=[cells.workload_name(w) for w in moved["workload"]])[
                ["workload", "before", "point", "value", "step", "suite_step", "outlier"]])
    st.caption("step: a workload's value over its value at the point before; suite_step: the geomean of its "
               "workloads' steps; outlier: |ln(step / suite_step)|, the biggest first.")
    chrome.show_sql("dashboard/suite_trend")


st.title("Trends")
st.caption("How do fusion rate, kernel count, compile failures, graph breaks and compile time of each workload "
           "move across compiler versions and dates? One line per workload; click a point to pick its run, "
           "a legend entry to bring its workload forward.")
chrome.stop_if_empty()
points = data.run("dashboard/trend_points", **filters.current())
if points.empty:
    st.warning(f"No runs match the filters ({filters.describe()}).")
    st.stop()
if points["compiler_version"].nunique() < 2 and points["started_at"].nunique() < 2:
    st.info("Only one compiler version and one date in view: a trend needs runs of at least two. "
            "The points below are the runs there are.")

left, right = st.columns([1, 3])
state.from_url("trend_axis", "axis", ["compiler version", "date"], default="compiler version")
with left:
    axis = st.segmented_control("Across", ["compiler version", "date"], key="trend_axis") or "compiler version"
state.to_url("axis", None if axis == "compiler version" else axis)
if "trend_view" not in st.session_state:  # the URL names a view by its value in VIEWS
    st.session_state["trend_view"] = next((k for k, v in VIEWS.items() if v and v == st.query_params.get("view")),
                                          "each workload")
with right:
    view = st.segmented_control("Lines", list(VIEWS), key="trend_view",
                                help="a suite of many models reads as one line: the geomean over its workloads, "
                                     "with the workloads that moved most against it listed") or "each workload"
state.to_url("view", VIEWS[view])
if view == "a suite (geomean)":
    suite_view(axis)
    st.stop()
versions = (points.sort_values("version_rank")["compiler_version"].dropna().unique().tolist())
if axis == "date":
    x = {"field": "started_at", "type": "temporal", "title": "run started"}
    undated = points["started_at"].isna().sum()
    if undated:  # profiles, Spyre files and harness CSVs tell no start time: no point, yet a run to open below
        st.caption(f"Runs without a start time ({undated:,}) are left out of the charts: their files tell none "
                   "(a profile, torch-spyre files, harness CSVs). They are in the list of runs below.")
else:
    # every release in view keeps its column, where a chart's points there are all unknown too
    x = {"field": "compiler_version", "type": "ordinal", "title": "compiler version", "sort": versions,
         "scale": {"domain": versions}, "axis": {"labelAngle": 0, "labelOverlap": True}}  # type: ignore[dict-item]
    unversioned = points["compiler_version"].isna().sum()
    if unversioned:
        st.caption(f"Runs without a compiler version ({unversioned:,}) are left out; switch to date to see them.")
        points = points.dropna(subset=["compiler_version"])
points = points.assign(series=[cells.workload_name(w) for w in points["workload"]])
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
          "legend": {"orient": "bottom", "direction": "horizontal", "columns": legend_columns(shown_series),
                     "symbolLimit": 0, "labelLimit": 0, "columnPadding": 12, "title": None}}

picked = None
for metric, title in METRICS.items():
    shown = charted.dropna(subset=[metric])
    # an unknown point is dropped from its line (never drawn as 0), and said so under the chart
    missing = unknowns.left_out(charted, metric)
    if shown.empty or (metric != "fusion_rate" and metric != "compile_s" and not shown[metric].any()):
        st.caption(f"**{title}**: none in the runs charted"
                   + (f"; unknown in {cells.plain(missing)}" if missing else "."))
        continue
    st.markdown(f"**{title}**")
    # across versions a line joins each version's one value; across dates each run is a point of its own
    line = POINT_COLUMNS[metric] if axis != "date" else None
    rows = shown.sort_values(["version_rank", "started_at"]) if line else shown.sort_values("started_at")
    event = st.vega_lite_chart(rows[CHART_COLUMNS + ([line] if line else [])], trend_chart(x, metric, title, colour, line),
                               on_select="rerun",
                               selection_mode="pick", key=f"trend_{metric}", height="content", width="stretch")
    if missing:
        st.caption(f"Unknown, not charted: {cells.plain(missing)}")
    if line and metric != "compile_s" and (off := off_line_note(rows, metric, line)):
        st.caption(off)  # compile time's note below says which of its runs are off the line, and why
    if metric == "compile_s":
        st.caption(cache_note(rows, line is not None))
    chosen_points = (event.selection.get("pick") or []) if event else []
    if chosen_points and chosen_points[0].get("run_id"):
        picked = chosen_points[0]["run_id"]

st.subheader("Open a run")
runs = points.sort_values(["model", "version_rank", "started_at"])
# timestamps as text in one step: a Timestamp object a row is slow on a large warehouse
started = runs["started_at"].astype(str).where(runs["started_at"].notna(), None)
labels = {r[-1]: " · ".join(map(cells.or_missing, r))
          for r in zip(runs["series"], runs["compiler_version"], started, runs["run_id"], strict=True)}
if picked in labels:
    st.session_state["trend_run"] = picked
run_id = st.selectbox("Run", list(labels), format_func=cells.labelled(labels), key="trend_run",
                      index=None, placeholder="pick a point above, or choose here")
open_run_button(run_id, "trend_open")
with st.expander(f"The {len(points):,} runs behind the charts"):
    cells.table(points.drop(columns=["version_rank", "series", "compile_cache_point", *POINT_COLUMNS.values()]))
chrome.show_sql("dashboard/trend_points")
