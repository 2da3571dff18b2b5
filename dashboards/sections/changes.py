"""What changed when: over a series of runs of one workload, where its kernels, fusion, compile
failures, graph breaks, compile phase times or Triton launch configs changed from one run to the
next, and the kernel diff of one such change."""

from collections import Counter
from urllib.parse import quote

import pandas as pd
import streamlit as st

from inductor_warehouse.analysis.changes import PHASE, TRITON, Change
from inductor_warehouse.analysis.words import plural
from inductor_warehouse.dashboards import analyses, cells, chrome, data, filters, state
from inductor_warehouse.dashboards.kernel_view import show_kernel_diff

VERSION = "compiler version"

st.title("What changed when")
st.caption("Across a series of runs of one workload (releases, or nightlies by a label), which run first "
           "changed its kernels, fusion, compile failures or graph breaks, which compile phase got 30% slower or "
           "faster, which Triton kernel changed its warps, stages or shared memory, and how? Pick a change point "
           "to see its kernels.")
chrome.stop_if_empty()
options = data.run("dashboard/filter_options")
models = sorted(options.loc[options["facet"] == "model", "value"].dropna().tolist())
picked = [m for m in (filters.current()["models"] or "").split(",") if m in models]
left, right = st.columns(2)
keys = data.run("dashboard/label_keys")
orders = [VERSION, *keys["label"].tolist()]
state.from_url("changes_model", "model", picked or models)
if "changes_model" not in st.session_state and not picked:
    # the model with the longest series first: a model of one run has nothing that changed
    longest = data.run("dashboard/series_models")["model"]
    st.session_state["changes_model"] = next((m for m in longest if m in models), None) or (models or [None])[0]
state.from_url("changes_series", "order", orders)
model = left.selectbox("Model", picked or models, key="changes_model")
series = right.selectbox("Order the runs by", orders, key="changes_series",
                         help="A label whose values sort as text, such as a nightly's date")
state.to_url("model", model)
state.to_url("order", None if series == VERSION else series)
report = analyses.change_points(model, None if series == VERSION else series)
runs = sum(len(rs) for rs in report.series.values())
n_series = len(report.series)
held = int(data.run("dashboard/overview_counts", models=model)["harness_result_runs"].iloc[0]) if model and not runs else 0
if held:  # runs of harness results alone (views/12_workloads.sql's harness_holders) are no series of compiles
    verb = "holds" if held == 1 else "hold"
    st.info(cells.plain(f"The {plural(held, 'run')} of {model} {verb} benchmark-harness results alone (a job's "
                        "CSVs, CI's expected values) and compiled nothing the warehouse can see, so they make no "
                        "series of compiles here.")
            + f" The [Benchmark suite](suite?suite={quote(model)}) page charts their results point by point, "
            "with HUD's rule against the point before.")
    chrome.show_sql("dashboard/overview_counts")
    st.stop()
st.caption(cells.plain(f"{plural(len(report.points), 'change point')} in {n_series} series of "
                      f"{plural(runs, 'run')} of {cells.or_missing(model, 'runs without a model')}, "
                      f"ordered by {report.ordered_by} (one series per "
                      "workload: mode, dtype, variant, batch, device, rank, harness run)."))
# a series of one point (one run, or runs of one version or label value) has no point before it:
# nothing can have changed there, nor stayed the same
lone = [key for key in report.series if report.point_counts.get(key, 0) < 2]
if not report.points:
    st.info("Nothing changed from run to run in any series of this model: every run has the kernels, fusion, "
            "compile failures and graph breaks of the run before it." if len(lone) < n_series else
            cells.plain("A series needs runs of one workload (its model, mode, dtype, variant, batch, device, "
                        "rank) at two points (versions, or values of the label); "
                        + (f"each of this model's {n_series} series holds one point: "
                                             + ", ".join(sorted(lone)) + "." if n_series > 1 else
                                             "this model has fewer.")))
    chrome.show_sql("compare/runs", "changes/kernel_identity_digests")
    st.stop()

if lone:
    st.caption(cells.plain(f"{plural(len(lone), 'series')} of one point, nothing to compare it with: " + ", ".join(sorted(lone))))
# the points with the biggest change first (a failure, a graph break, the kernels; phase times of one
# run a side last), each point's changes likewise
points = sorted(report.points, key=lambda p: (min(c.effect() for c in p.changes), p.series, p.position))
rows = [{"series": p.series, "before": p.before_at, "after": p.after_at,
         "changed": ", ".join(f"{m} x{n}" if n > 1 else m for m, n in
                              Counter(c.metric for c in sorted(p.changes, key=Change.effect)).items()),
         "kernels": next((c.detail for c in p.changes if c.metric == "kernel_identity"), ""),
         "commits": p.commits, "position": p.position, "before_run": p.before_run, "after_run": p.after_run}
        for p in points]
cells.table(pd.DataFrame(rows))
labels = {i: f"{p.series} · {p.before_at} → {p.after_at} · {', '.join(dict.fromkeys(c.metric for c in p.changes))}"
          for i, p in enumerate(points)}
chosen = points[st.selectbox("Change point", list(labels), format_func=cells.labelled(labels), key="changes_point")]  # type: ignore[call-overload]
values = [{"metric": c.metric, "before": cells.number(c.before), "after": cells.number(c.after),
           "detail": c.detail or None} for c in sorted(chosen.changes, key=Change.effect)]
cells.table(pd.DataFrame(values))
if chosen.compare_url:
    st.markdown(f"The torch commits between the two builds: [{chosen.commits}]({chosen.compare_url}) (GitHub's compare view).")
if any(c.metric == PHASE for c in chosen.changes):
    st.caption("compile_phase: seconds of a compile phase (a dynamo_timed span of the trace) in the runs of each "
               "point, their median, the phases that moved with it folded under it; timings are noisy: judged only "
               "with more than one run a side and a move of 30% and half a second, never between a point of warm runs "
               "(graphs loaded from the caches) and a compiled one: not comparable.")
if any(c.metric == TRITON for c in chosen.changes):
    st.caption("triton_config: a generated Triton kernel's launch config in each run (warps, stages, shared memory "
               "in bytes, registers where the autotuner logged them), paired by name without its counter.")
st.subheader("Kernels before and after")
show_kernel_diff(chosen.before_run, chosen.after_run, model, "changes")
st.caption(cells.plain(f"iwh compare --base {chosen.before_run} --head {chosen.after_run} "
                      + (f"--model {model} " if model else "") + "--kernels --show-code"))
chrome.show_sql("compare/runs", "changes/kernel_identity_digests", "compile/phase_changes", "triton/config_changes",
              "compare/kernels", "compare/autotune")
