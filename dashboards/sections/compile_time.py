"""Compile time: where the compile time of each workload goes, release by release."""

import altair as alt
import streamlit as st

from inductor_warehouse.analysis.words import plural
from inductor_warehouse.dashboards import cells, chrome, data, filters, unknowns

PHASES = {"dynamo_s": "Dynamo", "aot_s": "AOT autograd", "inductor_s": "Inductor", "code_gen_s": "Code gen"}

st.title("Compile time")
st.caption("Where does compile time go (Dynamo, AOT autograd, Inductor, code generation) for each "
           "workload and compiler version, and which release made it slower?")
chrome.stop_if_empty()
PAGE = 200
phases = data.run("compile/compile_time_breakdown", **filters.current(), limit=PAGE,
                  offset=chrome.page_offset("compile_time_page", PAGE))
if phases.empty:
    st.info(f"No compilation metrics in the runs in view ({filters.describe()}). They come from "
            "TORCH_TRACE logs; runs captured without one have no compile times.")
    chrome.show_sql("compile/compile_time_breakdown")
    st.stop()

total = int(phases["total"].max())
shown = f"{plural(len(phases), 'group')} of {total:,} on this page" if total > len(phases) else plural(total, "group")
phases["group"] = [f"{cells.workload_name(w)} · {cells.or_missing(v)}" for w, v in
                   zip(phases["workload"], phases["compiler_version"], strict=True)]
# a group of unknown totals alone gets no bar: its known part (Dynamo's) would read as a fast compile
whole = phases[phases["total_s"].notna()]
st.caption(f"{shown} (workload × compiler version) from {plural(int(phases['runs'].sum()), 'run')} with a total. "
           "Each bar is the fastest run of its group (the least total compile time: min of N, as every compile "
           "time is shown, in `iwh compare` too): its exclusive phases add up to its total, Dynamo + AOT "
           "autograd + Inductor + code gen; autotune time is part of code gen.")
missing = unknowns.left_out(data.run("dashboard/trend_points", **filters.current()), "compile_s")
if missing:
    partial = phases.loc[phases["total_s"].isna(), "group"].tolist()
    st.caption(f"**Total compile time unknown, not charted**: {cells.plain(missing)}"
               + (f" No bar for {plural(len(partial), 'group')} of no known total ({cells.plain(', '.join(partial))}): "
                  "the table shows the parts one of its runs did record, beside a total of `unknown`."
                  if partial else ""))
CHART_GROUPS = 60
charted = whole.head(CHART_GROUPS)
if len(whole) > CHART_GROUPS:
    st.caption(f"The chart shows the first {CHART_GROUPS} groups of the page; the table below has the page's "
               f"{len(phases):,}. Narrow the sidebar filters, or turn the page, to chart others.")
long = charted.melt(id_vars=["group", "workload", "compiler_version", "runs", "total_s"],
                    value_vars=list(PHASES), var_name="phase", value_name="seconds").dropna(subset=["seconds"])
long["phase"] = long["phase"].map(PHASES)
chart = alt.Chart(long).mark_bar().encode(
    y=alt.Y("group:N", title=None, sort=charted["group"].tolist(), axis=alt.Axis(labelLimit=420)),
    x=alt.X("sum(seconds):Q", title="compile time of the fastest run (s)"),
    color=alt.Color("phase:N", sort=list(PHASES.values()), legend=alt.Legend(orient="top")),
    order=alt.Order("phase_order:Q"),
    tooltip=["workload", "compiler_version", "phase", alt.Tooltip("seconds:Q", format=".3f"),
             alt.Tooltip("total_s:Q", format=".3f"), "runs"],
).transform_calculate(
    phase_order=" + ".join(f"(datum.phase == '{v}' ? {i} : 0)" for i, v in enumerate(PHASES.values()))
).properties(height=alt.Step(22))
if len(charted):
    st.altair_chart(chart, width="stretch", height="content")
# the group's name holds the workload, its device and the version: the phases fit at 1280 px
table = phases.drop(columns=[c for c in ("model", "workload", "compiler_version", "device", "frames", "total") if c in phases])
table = table.dropna(axis="columns", how="all")  # a part no run in view reports (autotune on the CPU)
# short headers (the full names in their tooltips and in the query's CSV): the phases fit at 1280 px
SHORT = {"total_s": "total s", "dynamo_s": "Dynamo", "aot_s": "AOT", "inductor_s": "Inductor", "code_gen_s": "code gen",
         "autotune_s": "autotune", "cxx_triton_compile_s": "C++/Triton"}
# a group without a total says so in its cell: a blank there read as "not shown", its Dynamo part as the whole
table["total_s"] = [unknowns.seconds(v) for v in table["total_s"]]
cells.table(table[["group", *[c for c in table.columns if c != "group"]]],
           column_config={"group": st.column_config.TextColumn("workload · compiler", width="medium"),
                          "fastest_run_id": st.column_config.TextColumn("fastest run", width="small"),
                          "runs": st.column_config.NumberColumn("timed runs", help="runs of the group with a known total"),
                          **{c: st.column_config.TextColumn(label, alignment="right", help=f"{c}: seconds")
                             for c, label in SHORT.items() if c in table}})
chrome.pager(total, PAGE, "compile_time_page")
chrome.show_sql("compile/compile_time_breakdown")
