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
# a group of no compiled run says what its bar is: the cache load of its warm runs
phases["group"] = [f"{cells.workload_name(w)} · {cells.or_missing(v)}" + ("" if c == "compiled" else f" ({c} cache)")
                   for w, v, c in zip(phases["workload"], phases["compiler_version"], phases["cache"], strict=True)]
# a group of unknown totals alone gets no bar: its known part (Dynamo's) would read as a fast compile
whole = phases[phases["total_s"].notna()]
timed = int(phases["runs"].sum() + phases["other_runs"].sum())
st.caption(f"{shown} (workload × compiler version) from {plural(timed, 'run')} with a total. "
           "Each bar is the fastest of its group's compiled runs, caches off or cold (the least total compile time: "
           "min of N, as every compile time is shown, in `iwh compare` too): its exclusive phases add up to its "
           "total, Dynamo + AOT autograd + Inductor + code gen; autotune time is part of code gen.")
loaded = phases[phases["other_runs"] > 0]
if len(loaded):
    st.caption(f"**Runs that loaded from a warm cache are left out** of {plural(len(loaded), 'group')} with compiled "
               f"runs ({plural(int(loaded['other_runs'].sum()), 'run')}: *timed runs* reads 1 of 2): loading compiled "
               f"graphs is not compiling them. `cache/warm_vs_cold_compile_time` compares the two.")
alone = phases[phases["cache"] != "compiled"]
if len(alone):
    st.caption(f"{plural(len(alone), 'group')} of no compiled run show their warm runs' cache load, marked so: "
               + cells.plain(", ".join(alone["group"])))
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
# the kind is in the group's name and the runs left out in the runs' cell: the phases fit at 1280 px
table["runs"] = [f"{n}" + (f" of {n + o}" if o else "") for n, o in zip(table["runs"], table["other_runs"], strict=True)]
table = table.drop(columns=["cache", "other_runs"])
# short headers (the full names in their tooltips and in the query's CSV): the phases fit at 1280 px
SHORT = {"total_s": "total s", "dynamo_s": "Dynamo", "aot_s": "AOT", "inductor_s": "Inductor", "code_gen_s": "code gen",
         "autotune_s": "autotune", "cxx_triton_compile_s": "C++/Triton"}
# a group without a total says so in its cell: a blank there read as "not shown", its Dynamo part as the whole
table["total_s"] = [unknowns.seconds(v) for v in table["total_s"]]
cells.table(table[["group", *[c for c in table.columns if c != "group"]]],
           column_config={"group": st.column_config.TextColumn("workload · compiler", width="medium"),
                          "fastest_run_id": st.column_config.TextColumn("fastest run", width="small"),
                          "runs": st.column_config.TextColumn(
                              "timed runs", alignment="right",
                              help="runs of the group with a known total, compiled ones (caches off or cold) where "
                                   "it has any; '1 of 2': one of two timed runs, the other of another cache kind "
                                   "(loaded from a warm cache) left out"),
                          **{c: st.column_config.TextColumn(label, alignment="right", help=f"{c}: seconds")
                             for c, label in SHORT.items() if c in table}})
chrome.pager(total, PAGE, "compile_time_page")
chrome.show_sql("compile/compile_time_breakdown")
