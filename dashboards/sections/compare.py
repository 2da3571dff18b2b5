"""Compare releases: two sets of runs, workload by workload, down to the code of a changed kernel."""

import shlex

import pandas as pd
import streamlit as st

from inductor_warehouse.analysis.selectors import SelectorError
from inductor_warehouse.analysis.words import plural
from inductor_warehouse.analysis.metrics import RATES
from inductor_warehouse.analysis.render import (failures_frame, hud_frame, long_frame, render, summary_frame,
                                                 wide_frame)
from inductor_warehouse.dashboards import analyses, cells, chrome, data, state
from inductor_warehouse.dashboards.kernel_view import show_kernel_diff
from inductor_warehouse.dashboards.line_view import show_line_diff

# the fusion rate beside both node counts it is worked out from (1 - post / pre)
SHOWN = ("failures", "fallbacks", "kernels", "extern_kernels", "fusion_rate", "pre_fusion_nodes", "post_fusion_nodes",
         "graph_breaks", "uncounted_breaks", "recompiles", "compile_s", "kernel_us", "accuracy", "speedup",
         "compilation_latency", "compression_ratio")
COUNTS = {"failures", "fallbacks", "kernels", "extern_kernels", "pre_fusion_nodes", "post_fusion_nodes", "graph_breaks",
          "uncounted_breaks", "recompiles"}
UNKNOWN = ("base unknown", "head unknown")  # analysis/metrics.py's `how` of a metric unknown on one side
COLOURS = {"regression": "background-color: #f8d0d0", "improvement": "background-color: #cdebd3"}

st.title("Compare releases")
chrome.stop_if_empty()
sides = data.run("dashboard/compare_sides")
choices = sides["selector"].tolist()
labels = {s: f"{s} ({plural(runs, 'run')}, {plural(models, 'model')})"
          for s, runs, models in zip(sides["selector"], sides["runs"], sides["models"], strict=True)}
compilers = [c for c in choices if c.startswith("compiler=")]
if len(choices) < 2:
    st.info("Comparing needs runs of at least two compiler versions or label values; this warehouse has "
            f"{len(choices)}.")
    st.stop()

# a link's own selector (a run id, or a selector of several parts) is honoured as `iwh compare` takes it
for param in ("base", "head"):
    linked = st.query_params.get(param)
    if linked and linked not in choices and f"compare_{param}" not in st.session_state:
        choices = [*choices, linked]
        labels[linked] = f"{linked} (from the link)"
left, right = st.columns(2)
default_base = compilers[0] if len(compilers) >= 2 else choices[0]
default_head = compilers[-1] if len(compilers) >= 2 else choices[1]
state.from_url("compare_base", "base", choices, default=default_base)
state.from_url("compare_head", "head", choices, default=default_head)
base = left.selectbox("Base", choices, format_func=cells.labelled(labels), key="compare_base")
head = right.selectbox("Head", choices, format_func=cells.labelled(labels), key="compare_head")
state.to_url("base", base)
state.to_url("head", head)
if base == head:
    st.info("Pick two different sides: a side compared with itself says nothing.")
    st.stop()
try:
    result = analyses.compare_releases(base, head)
except SelectorError as e:
    st.warning(cells.prose(e))
    st.stop()
if not result.pairs:
    for w in result.warnings:
        st.warning(cells.prose(w))
    if result.base_only or result.head_only:  # as `iwh compare` lists them: what each side holds instead
        st.info(cells.plain("; ".join(f"{side} only: {', '.join(keys)}" for side, keys in
                                      (("base", result.base_only), ("head", result.head_only)) if keys)))
    st.stop()

# the answer first: the verdict, what regressed, the failures; notes and explanations below
command = f"iwh compare --base {shlex.quote(base)} --head {shlex.quote(head)} --fail-on regression"
regressions = result.regressions
if regressions:  # a warning: the page's st.error means the page itself failed
    # the regressions first, then what was compared: the head-only count must not read as their subject
    st.warning(cells.plain(f"{plural(len(regressions), 'regression')}: " + ", ".join(f"{k} {m}" for k, m in regressions))
               + cells.prose(f". Compared: {result.headline()} (`{command}` exits 1)."))
else:
    st.success(cells.prose(f"No regression in {result.headline()} by `iwh compare`'s rules (`{command}` exits 0)."))
# what changed, and where one side is unknown (NULL): `iwh compare` prints those "n/a", "base unknown"
every = long_frame(result).to_pandas()
changed = every[~every["verdict"].isin(["unchanged", "n/a"]) | every["how"].isin(UNKNOWN)]
order = {"regression": 0, "improvement": 1}
changed = changed.assign(_o=changed["verdict"].map(order).fillna(2)).sort_values(
    ["_o", "workload", "metric"], kind="stable").drop(columns="_o")
if len(changed):
    st.subheader("What moved")
    if changed["how"].isin(UNKNOWN).any():
        st.caption("n/a: no file of that side's runs tells the value (`iwh compare`: base unknown, head unknown); "
                   "neither a regression nor an improvement.")
    moved = changed[["workload", "metric", "base", "head", "delta", "pct", "verdict", "how"]].fillna("")
    for side in ("base", "head"):
        moved[side] = moved[side].where((moved[side] != "") | ~moved["how"].isin(UNKNOWN), "n/a")
    st.dataframe(moved.style.apply(lambda col: col.map(COLOURS).fillna(""), subset=["verdict"]),
                 hide_index=True, width="stretch",
                 column_config={c: st.column_config.TextColumn(alignment="right") for c in ("base", "head", "delta", "pct")})
else:
    st.caption("Every metric of every workload on both sides is the same.")

failures = failures_frame(result).to_pandas()
if len(failures):
    st.subheader("Compile failures of a cause one side lacks")
    cells.table(failures[["workload", "failure", "compile_id", "frame", "ran_eagerly", "cause", "reason", "run"]])
    st.caption("New: the head fails to compile a frame where the base never failed for that cause (a "
               "regression); gone: the other way round. `ran_eagerly`: Dynamo then ran the frame without compiling it.")

if result.hud:
    st.subheader("Benchmark harness: HUD's suite numbers")
    hud = hud_frame(result).to_pandas()
    hud = hud[["suite", "metric", "base", "head", "pct", "verdict", "how", "workloads", "ran_in"]]
    st.dataframe(hud.style.apply(lambda col: col.map(COLOURS).fillna(""), subset=["verdict"]),
                 hide_index=True, width="stretch")
    st.caption("HUD's compiler dashboard numbers of each side, over the harness rows that measured the compared runs "
               "(each workload's samples by its metric's one rule: median of N speedups and compression ratios, min "
               "of N compilation latencies): pass rate, geomean speedup, mean compilation latency (s) and compression "
               "ratio, judged by HUD's thresholds (pass rate 0.9x, speedup and compression 0.95x, compilation "
               "latency 1.15x the base). The pass rate is exact; a measured number is judged only where every "
               "workload of it has two samples or more a side (how: the fewest), as a workload's are: one run "
               "against one is insufficient data. A regression here gates `iwh compare --fail-on regression` as "
               "a workload's does.")
    chrome.show_sql("compare/harness", "compare/hud_summary")

st.subheader("Summary over the workloads on both sides")
summary = summary_frame(result).to_pandas()
cells.table(summary)
if len(summary) and (summary["workloads"] < len(result.pairs)).any():
    fewer = summary.loc[summary["workloads"] < len(result.pairs), "metric"].tolist()
    st.caption(cells.plain(f"{', '.join(fewer)}: over the workloads whose value is known on both sides, fewer than "
                           f"the {len(result.pairs)} compared (workloads)."))

notes = len(result.warnings) + len(result.notes)
with st.expander(f"Notes ({plural(notes, 'note')}), how runs pair, the command and its markdown"
                 if notes else "How runs pair, the command and its markdown"):
    for w in result.warnings:
        st.warning(cells.prose(w))
    for n in result.notes:
        st.info(cells.prose(n))
    st.caption("The sidebar filters do not apply here: base and head pick the runs, as `iwh compare --base "
               "--head` does. Runs pair by workload (model, mode, dtype, variant, batch, device, and the benchmark "
               "harness's performance or accuracy run); workloads on one side only are listed apart and never "
               "enter the summary. Red: a regression by `iwh compare`'s rules (a new compile failure or fallback "
               "to eager, more kernels, fewer fused nodes, more graph breaks or recompiles wherever they happen, a "
               "failed accuracy check or run of the benchmark harness; timings, speedup and compression ratio only "
               "with enough samples). Green: an improvement.")
    st.code(command, language="bash")
    markdown = render(result, "markdown")
    st.code(markdown, language="markdown")
    st.download_button("Download the markdown", markdown, file_name="compare.md", mime="text/markdown",
                       key="compare_markdown")
    chrome.show_sql("dashboard/compare_sides", "compare/runs", "compare/failures")

wide = wide_frame(result).to_pandas()
compared = wide[wide["status"] == "compared"]
# a metric is shown where some compared workload has it on either side (a count: other than 0): one
# side known beside an unknown one reads n/a there, never as a metric no run has
kept = [m for m in SHOWN if f"{m}_base" in wide and compared[[f"{m}_base", f"{m}_head"]].notna().any().any()
        and (m not in COUNTS or compared[[f"{m}_base", f"{m}_head"]].fillna(0).any().any())]
columns = ["model", "config"] + [f"{m}_{part}" for m in kept
                                 for part in (("base", "head") if m == "accuracy" else ("base", "head", "delta", "pct"))
                                 if f"{m}_{part}" in wide]


def colour(frame: pd.DataFrame) -> pd.DataFrame:
    """Delta and % cells coloured by the regression rules' verdict on that metric."""
    styles = pd.DataFrame("", index=frame.index, columns=frame.columns)
    for col in frame.columns:
        metric = col.rsplit("_", 1)[0]
        if col.endswith(("_delta", "_pct")) or col == "accuracy_head":
            styles[col] = compared.loc[frame.index, f"{metric}_verdict"].map(COLOURS).fillna("")
    return styles


def missing(value) -> bool:
    return value is None or (not isinstance(value, str) and pd.isna(value))


def cell(col: str, value, other=None) -> str:
    """Counts as integers, rates as percentages, percentages with %, times to 3 places; NULL blank,
    or n/a where the other side (`other`) is known: that side is unknown, as `iwh compare` says."""
    if missing(value):
        return "n/a" if col.endswith(("_base", "_head")) and not missing(other) else ""
    if isinstance(value, str):
        return value  # the harness's accuracy: pass, fail_accuracy, ...
    metric, part = col.rsplit("_", 1)
    signed = part in ("delta", "pct") and round(value, 3) != 0
    if part == "pct":
        return f"{value:+.1f}%" if signed else "0%"
    if metric in COUNTS:
        return f"{value:+,.0f}" if signed else f"{value:,.0f}"
    if metric in RATES:
        return f"{100 * value:+.1f} pp" if part == "delta" and signed else f"{100 * value:.1f}%"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


with st.expander("Every metric of every workload"):
    shown = compared[columns].copy()
    for col in columns[2:]:
        twin = col[:-4] + ("head" if col.endswith("_base") else "base")
        shown[col] = [cell(col, v, o) for v, o in zip(shown[col], compared[twin] if twin in compared
                                                      else [None] * len(shown), strict=True)]
    st.dataframe(shown.style.apply(colour, axis=None), hide_index=True, width="stretch",
                 column_config={c: st.column_config.TextColumn(alignment="right") for c in columns[2:]})
    if (shown[columns[2:]] == "n/a").any().any():
        st.caption("n/a: unknown on that side, no file of its runs tells it (`iwh compare`: base unknown, "
                   "head unknown).")
    only = wide[wide["status"] != "compared"][["model", "status"]]
    if len(only):
        st.markdown("**On one side only** (not compared)")
        cells.table(only)

st.subheader("Kernel-level diff")
pairs = {p.key: p for p in result.pairs}
state.from_url("compare_model", "workload", list(pairs))
key = st.selectbox("Workload", list(pairs), key="compare_model",
                   help="The workload whose kernels are diffed: its first run on each side.")
state.to_url("workload", key)
pair = pairs[key]
show_kernel_diff(pair.base_runs[0], pair.head_runs[0], pair.model, "compare")
selectors = [f"{s}" + "".join(f",{k}={v}" for k, v in sorted(pair.config.items())) for s in (base, head)]
st.caption(cells.plain(f"iwh compare --base {shlex.quote(selectors[0])} --head {shlex.quote(selectors[1])} "
                      f"--model {shlex.quote(pair.model)} --kernels --show-code"))
chrome.show_sql("compare/kernels", "compare/fusions", "compare/autotune", "explore/kernel_code", "explore/output_code")

st.subheader("One model line, both sides")
st.caption("Which kernels did a line of the model become in each release, and which of them changed?")
show_line_diff(pair.base_runs[0], pair.head_runs[0], pair.model, "compare")
