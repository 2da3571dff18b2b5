"""Compare releases: two sets of runs, model by model, down to the code of a changed kernel."""

import pandas as pd
import streamlit as st

from analysis.compare import SelectorError
from analysis.render import summary_frame, wide_frame
from dashboards import data
from dashboards.kernel_view import show_kernel_diff

SHOWN = ("kernels", "extern_kernels", "fusion_rate", "post_fusion_nodes", "graph_breaks", "recompiles",
         "compile_s", "kernel_us")
COLOURS = {"regression": "background-color: #f8d0d0", "improvement": "background-color: #cdebd3"}

st.title("Compare releases")
st.caption("What changed between two compiler versions (or two label values) for each model, is it a "
           "regression, and which kernels changed and how?")
data.stop_if_empty()
sides = data.run("dashboard/compare_sides")
choices = sides["selector"].tolist()
labels = {r.selector: f"{r.selector} ({r.runs} runs, {r.models} models)" for r in sides.itertuples()}
compilers = [c for c in choices if c.startswith("compiler=")]
if len(choices) < 2:
    st.info("Comparing needs runs of at least two compiler versions or label values; this warehouse has "
            f"{len(choices)}.")
    st.stop()

left, right = st.columns(2)
default_base = compilers[0] if len(compilers) >= 2 else choices[0]
default_head = compilers[-1] if len(compilers) >= 2 else choices[1]
base = left.selectbox("Base", choices, index=choices.index(default_base), format_func=labels.get,
                      key="compare_base")
head = right.selectbox("Head", choices, index=choices.index(default_head), format_func=labels.get,
                       key="compare_head")
st.caption("The sidebar filters do not apply here: base and head pick the runs, as `iwh compare --base "
           "--head` does. Models run on one side only are listed apart and never enter the summary.")
data.show_sql("dashboard/compare_sides", "compare/runs")
if base == head:
    st.info("Pick two different sides.")
    st.stop()
try:
    result = data.compare_releases(base, head)
except SelectorError as e:
    st.warning(data.plain(e))
    st.stop()
for w in result.warnings:
    st.warning(data.plain(w))
for n in result.notes:
    st.info(data.plain(n))
if not result.pairs:
    st.stop()

st.subheader("Summary over the models on both sides")
st.dataframe(summary_frame(result).to_pandas(), hide_index=True, width="stretch")

st.subheader("Per model")
st.caption(f"{len(result.pairs)} models on both sides; {len(result.base_only)} on the base side only, "
           f"{len(result.head_only)} on the head side only.")
wide = wide_frame(result).to_pandas()
compared = wide[wide["status"] == "compared"]
columns = ["model", "config"] + [f"{m}_{part}" for m in SHOWN for part in ("base", "head", "delta", "pct")
                                 if f"{m}_{part}" in wide and compared[f"{m}_base"].notna().any()]


def colour(frame: pd.DataFrame) -> pd.DataFrame:
    """Delta and % cells coloured by the regression rules' verdict on that metric."""
    styles = pd.DataFrame("", index=frame.index, columns=frame.columns)
    for col in frame.columns:
        metric = col.rsplit("_", 1)[0]
        if col.endswith(("_delta", "_pct")):
            styles[col] = compared.loc[frame.index, f"{metric}_verdict"].map(COLOURS).fillna("")
    return styles


st.dataframe(compared[columns].style.apply(colour, axis=None).format(precision=3), hide_index=True,
             width="stretch")
st.caption("Red: a regression by `iwh compare`'s rules (more kernels, fewer fused nodes, more graph breaks "
           "or recompiles; timings only with enough samples). Green: an improvement.")
only = wide[wide["status"] != "compared"][["model", "status"]]
if len(only):
    st.markdown("**On one side only** (not compared)")
    st.dataframe(only, hide_index=True, width="stretch")

st.subheader("Kernel-level diff")
pairs = {p.key: p for p in result.pairs}
key = st.selectbox("Model", list(pairs), key="compare_model")
pair = pairs[key]
show_kernel_diff(pair.base_runs[0], pair.head_runs[0], pair.model, "compare")
data.show_sql("compare/kernels", "compare/fusions", "compare/autotune", "explore/kernel_source")
