"""Benchmark suite: PyTorch's benchmark harness numbers as HUD's compiler dashboard charts them, over
releases or nightlies: pass rate, geomean speedup, mean compilation latency and compression ratio per
suite and backend variant; a point clicked opens its models beside the point before, with HUD's flags,
each linked to its runs in the Run explorer."""

import pandas as pd
import streamlit as st

from inductor_warehouse.schema.releases import release_key
from inductor_warehouse.analysis.words import plural
from inductor_warehouse.dashboards import cells, chrome, data, filters, state
from inductor_warehouse.dashboards.palette import palette

VERSION = "compiler version"
# HUD's four charts: (summary column, title, axis format)
CHARTS = {"pass_rate": ("Pass rate", ".0%"), "geomean_speedup": ("Geomean speedup (x)", ".3~f"),
          "compilation_latency_s": ("Mean compilation latency (s)", ".1~f"),
          "compression_ratio": ("Peak memory compression ratio (x)", ".3~f")}
# HUD leaves eager and aot_eager off its dashboard (BLOCKLIST_COMPILERS): offered, not drawn at first
BASELINES = ("eager", "aot_eager")
FLAG_COLOURS = {"regression": "background-color: #f8d0d0", "improvement": "background-color: #cdebd3",
                "warning": "background-color: #fbeec1"}
PLOT_HEIGHT = 200


def picker(label: str, options: list, key: str, param: str, first=None, help: str | None = None):
    """A selectbox whose value lives in the URL (`param`), the first option (or `first`) by default."""
    if not options:
        return None
    state.from_url(key, param, options)
    if key not in st.session_state or st.session_state[key] not in options:
        st.session_state[key] = first if first in options else options[0]
    value = st.selectbox(label, options, key=key, help=help, format_func=cells.or_missing)
    state.to_url(param, value)
    return value


def busiest(frame: pd.DataFrame, column: str, within: tuple[str, ...]):
    """The option of `column` that the busiest series of `frame` has (a series: one value of each of
    `within`): the most points over releases or a label (a result set of no known release is a point
    on no line), then the most points, then the most models. The page opens there, rather than on the
    first name in order (a suite of one point) or on result sets no line joins."""
    if frame.empty:
        return None
    placed = frame["point"].where(frame["in_series"].astype(bool))
    sizes = (frame.assign(placed=placed).groupby(list(within), dropna=False)
             .agg(placed=("placed", "nunique"), points=("point", "nunique"), models=("workloads", "sum")))
    best = sizes.sort_values(["placed", "points", "models"], ascending=False, kind="stable").index[0]
    return best[list(within).index(column)] if isinstance(best, tuple) else best


def series_name(row) -> str:
    """A chart's line: the backend, and the variant where one is labelled."""
    return str(row["backend"] or "backend unknown") + (f" · {row['variant']}" if isinstance(row["variant"], str) else "")


def chart(frame: pd.DataFrame, metric: str, points: list, colour: dict) -> dict:
    """A Vega-Lite spec: a line per backend variant over the points, its points to click. Written as the
    spec itself, as Trends' are. A set's own point (of no known release) is a mark on no line: nothing
    says what comes before it."""
    title, fmt = CHARTS[metric]
    # labels slanted where they would not fit side by side in half a 1280 px column (about 50 characters)
    slant = len(points) > 8 or sum(len(str(p)) + 2 for p in points) > 50
    x = {"field": "point", "type": "ordinal", "title": None, "sort": points,
         "axis": {"labelAngle": -45 if slant else 0, "labelOverlap": True}}
    y = {"field": metric, "type": "quantitative", "title": None, "axis": {"format": fmt},
         "scale": {"zero": metric == "pass_rate"}}
    tooltip = [{"field": "point", "type": "ordinal"}, {"field": "series", "type": "nominal", "title": "backend"},
               {"field": metric, "type": "quantitative", "format": fmt, "title": title},
               {"field": "workloads", "type": "quantitative", "title": "models"}]
    return {"height": PLOT_HEIGHT, "autosize": {"type": "fit-x", "contains": "padding"},
            "title": {"text": title, "anchor": "start", "fontSize": 14}, "layer": [
        {"mark": {"type": "line", "strokeWidth": 1.5}, "transform": [{"filter": "datum.in_series"}],
         "encoding": {"x": x, "y": y, "color": colour}},
        {"mark": {"type": "circle", "size": 70 if len(points) <= 60 else 18, "opacity": 0.9},
         "params": [{"name": "pick", "select": {"type": "point", "fields": ["point", "series"]}}],
         "encoding": {"x": x, "y": y, "color": colour, "tooltip": tooltip}},
    ]}


def moved(before, now, digits: int | None = None) -> str:
    """`before → now` where they differ (HUD's cells), else the one value; '' when neither is known."""
    def text(v):
        if v is None or (not isinstance(v, str) and pd.isna(v)):
            return "–"
        return v if isinstance(v, str) else f"{v:.{digits}f}"
    if text(before) == "–" and text(now) == "–":
        return ""
    return text(now) if text(before) in (text(now), "–") else f"{text(before)} → {text(now)}"


st.title("Benchmark suite")
st.caption("PyTorch's benchmark harness (`benchmarks/dynamo`: timm_models, huggingface, torchbench) as HUD's "
           "compiler dashboard charts it: pass rate, geomean speedup, mean compilation latency and compression ratio "
           "over releases or nightlies, a line per backend variant. Click a point for its models.")
chrome.stop_if_empty()
keys = data.run("dashboard/label_keys")
orders = [VERSION, *keys["label"].tolist()]
top = st.columns([1.3, 1.2, 1, 1, 1])
with top[0]:
    key = picker("A point is a", orders, "suite_key", "key", first="nightly" if "nightly" in orders else VERSION,
                 help="HUD's points are nightlies: a label such as `nightly` makes each of its values a point")
point_key = None if key == VERSION else key
summary = data.run("harness/summary", key=point_key)
counts = data.run("dashboard/overview_counts").iloc[0]
if summary.empty:
    st.info("No benchmark harness results in this warehouse. Ingest the folder a harness job wrote its CSVs to "
            "(`--performance` and `--accuracy`, CI's `test-reports-*.zip` as downloaded), or run it under `iwh capture` "
            "(docs/ingesting.md: the benchmark harness).")
    chrome.show_sql("harness/summary")
    st.stop()
summary = summary[summary["point"].notna()]
shown = summary
choice = {}
PICKED = (("suite", "Suite"), ("mode", "Mode"), ("dtype", "Dtype"), ("device", "Device"))
for i, (place, (column, label)) in enumerate(zip(top[1:], PICKED, strict=True)):
    with place:  # each picker offers what the ones before it left
        choice[column] = picker(label, sorted(shown[column].dropna().unique()), f"suite_{column}", column,
                                first=busiest(shown, column, tuple(c for c, _ in PICKED[i:])))
    shown = shown[shown[column] == choice[column]] if choice[column] else shown
suite, mode, dtype, device = choice["suite"], choice["mode"], choice["dtype"], choice["device"]
shown = shown.assign(series=[series_name(r) for _, r in shown.iterrows()])
every = sorted(shown["series"].unique())
state.from_url("suite_series", "backends", every, many=True)
if not [s for s in st.session_state.get("suite_series", []) if s in every]:
    st.session_state["suite_series"] = [s for s in every if s.split(" · ")[0] not in BASELINES] or every
chosen = st.multiselect("Backend variants", every, key="suite_series",
                        help="eager and aot_eager are backends of their own, never part of inductor's numbers; HUD "
                             "leaves them off its charts")
state.to_url("backends", chosen if set(chosen) != {s for s in every if s.split(" · ")[0] not in BASELINES} else None)
shown = shown[shown["series"].isin(chosen)]
# the series' points in order, then the sets' own (results of no known release), which have no place in it
placed = sorted(shown.loc[shown["in_series"], "point"].unique(), key=release_key if point_key is None else str)
apart = sorted(set(shown.loc[~shown["in_series"], "point"]) - set(placed))
points = placed + apart
held = int(counts["harness_result_runs"])
off_axis = int(data.run("dashboard/harness_off_axis", key=point_key).iloc[0]["runs"]) if point_key else 0
st.caption(cells.plain(
    f"{plural(len(points), 'point')} of {cells.or_missing(suite)} ({cells.or_missing(mode)}, {cells.or_missing(dtype)}, "
    f"{cells.or_missing(device)}), up to {int(shown['workloads'].max()) if len(shown) else 0:,} models a point; "
    + (f"{plural(held, 'run')} {'holds' if held == 1 else 'hold'} harness results alone (a job's CSVs, CI's "
       "expected values) beside the compiles. " if held else "")
    + (f"{plural(len(apart), 'point')} of no known release ({', '.join(apart)}): each a result set of its own, "
       "named by its run's labels, on no line. " if apart else "")
    + (f"{plural(off_axis, 'run')} with harness results but no label {point_key}: on no point here. "
       if off_axis else "")
    + "Each model's repeated runs at a point count once: the median of its speedups and compression ratios, the "
      "least of its compilation latencies (the worst accuracy)."))

colour = {"field": "series", "type": "nominal", "title": None,
          "scale": {"domain": chosen, "range": palette(len(chosen))},
          "legend": {"orient": "bottom", "direction": "horizontal", "labelLimit": 260}}
picked = None
for i, metric in enumerate(CHARTS):
    if i % 2 == 0:
        grid = st.columns(2)  # a row of two charts: read left to right, then down
    with grid[i % 2]:
        values = shown.dropna(subset=[metric])
        if values.empty:
            st.caption(f"**{CHARTS[metric][0]}**: none at these points"
                       + (" (no accuracy run: HUD's pass rate needs one)" if metric == "pass_rate" else ""))
            continue
        event = st.vega_lite_chart(values[["point", "series", metric, "workloads", "in_series"]],
                                   chart(values, metric, points, colour),
                                   on_select="rerun", selection_mode="pick", key=f"suite_chart_{metric}",
                                   width="stretch")
        chosen_points = (event.selection.get("pick") or []) if event else []
        if chosen_points and chosen_points[0].get("point"):
            picked = chosen_points[0]
if picked:
    st.query_params["at"], st.query_params["line"] = picked["point"], picked["series"]
at = st.query_params.get("at")
line = st.query_params.get("line")
if at not in points or line not in chosen:
    at, line = None, None
chrome.show_sql("harness/summary")

if at is None:
    st.info("Click a point of a chart: its models appear here, each against the point before, with HUD's flags and "
            "links to its runs.")
    st.stop()
row = shown[(shown["point"] == at) & (shown["series"] == line)].iloc[0]
st.subheader(cells.plain(f"{suite} at {at}: {line}"))
models = data.run("harness/point_models", key=point_key, point=at, suite=suite, backend=row["backend"], mode=mode,
                  dtype=dtype, device=device)
if isinstance(row["variant"], str):
    models = models[models["variant"] == row["variant"]]
before = models["before_point"].dropna()
words = models["flags"].str.split()
regressed = words.map(lambda f: any(not x.startswith(("+", "!")) for x in f))
better = words.map(lambda f: any(x.startswith("+") for x in f)) & ~regressed
st.caption(cells.plain(
    f"{plural(len(models), 'model')} at {at}"
    + (f", against {before.iloc[0]}" if len(before) else
       ", a result set of no known release: nothing before it" if at in apart else ", the first point")
    + f": {int(regressed.sum())} flagged by HUD's rule (accuracy that stopped passing, speedup, compilation latency "
      f"or compression ratio moved more than 5%, peak memory more than 20%), {int(better.sum())} only better. "
      "A link opens the compile the row measured in the Run explorer."))
picked_models = [m for m in (filters.current()["models"] or "").split(",") if m]
if picked_models:
    models = models[models["model"].isin(picked_models)]
for side in ("performance", "accuracy"):
    models[f"{side}_run"] = [f"explorer?run={r}" if isinstance(r, str) else None for r in models[f"{side}_run_id"]]
table = pd.DataFrame({
    "model": models["model"], "flags": models["flags"],
    "accuracy": [moved(b, n) for b, n in zip(models["before_accuracy"], models["accuracy"], strict=True)],
    "speedup": [moved(b, n, 3) for b, n in zip(models["before_speedup"], models["speedup"], strict=True)],
    # text, as every table shows a value with a gap (cells.readable): the empty cell is no point before
    "speedup_change": ["" if pd.isna(b) or not b or pd.isna(n) else f"{(n - b) / b:+.1%}"
                       for b, n in zip(models["before_speedup"], models["speedup"], strict=True)],
    "compilation_latency_s": [moved(b, n, 1) for b, n in zip(models["before_compilation_latency_s"],
                                                              models["compilation_latency_s"], strict=True)],
    "compression_ratio": [moved(b, n, 3) for b, n in zip(models["before_compression_ratio"],
                                                          models["compression_ratio"], strict=True)],
    "performance_run": models["performance_run"], "accuracy_run": models["accuracy_run"],
}).reset_index(drop=True)
flags = {"accuracy": "accuracy_flag", "speedup": "speedup_flag", "speedup_change": "speedup_flag",
         "compilation_latency_s": "compilation_latency_flag", "compression_ratio": "compression_ratio_flag"}


def colours(frame: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame("", index=frame.index, columns=frame.columns)
    for column, flag in flags.items():
        out[column] = models[flag].reset_index(drop=True).map(FLAG_COLOURS).fillna("")
    return out


config = {f"{side}_run": st.column_config.LinkColumn(f"{side} run", display_text=r"explorer\?run=(.*)", width=95)
          for side in ("performance", "accuracy")}
# widths that fit a 1280 px screen's main column: the moved values whole, the flags cut
config["model"] = st.column_config.TextColumn("model", width=190)
config["speedup_change"] = st.column_config.TextColumn("speedup Δ", width=80, alignment="right")
config["flags"] = st.column_config.TextColumn("HUD's flags", width=170,
                                              help="regressed metrics; + improved, ! below HUD's compression "
                                                   "threshold (0.9)")
config |= {c: st.column_config.TextColumn(title, width=w) for c, title, w in (
    ("accuracy", "accuracy", 80), ("speedup", "speedup", 115), ("compilation_latency_s", "compile (s)", 105),
    ("compression_ratio", "compression", 115))}
st.dataframe(table.style.apply(colours, axis=None), hide_index=True, width="stretch", column_config=config)
chrome.show_sql("harness/point_models")
with st.expander(f"HUD's rule for {cells.plain(suite)} at {cells.plain(at)} against the point before"):
    if len(before):
        rule = data.run("harness/hud_regression", base=before.iloc[0], head=at, key=point_key)
        rule = rule[(rule["suite"] == suite) & (rule["backend"] == row["backend"]) & (rule["mode"] == mode)]
        cells.table(rule[["metric", "base", "head", "limit_value", "rule", "verdict", "base_workloads", "head_workloads"]])
        chrome.show_sql("harness/hud_regression")
    else:
        st.caption("A result set of no known release: nothing before it." if at in apart
                   else "The first point of its series: nothing before it.")
