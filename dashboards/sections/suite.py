"""Benchmark suite: PyTorch's benchmark harness numbers as HUD's compiler dashboard shows them, per
suite and release, HUD's regression rule between two points, and each model's numbers beside the
run that compiled it (drill-down to its kernels and graph breaks in the Run explorer)."""

import pandas as pd
import streamlit as st

from inductor_warehouse.analysis.changes import release_key
from inductor_warehouse.analysis.words import plural
from inductor_warehouse.dashboards import data, filters, state
from inductor_warehouse.dashboards.navigation import open_run_button

VERSION = "compiler version"
COLOURS = {"regression": "background-color: #f8d0d0", "no_regression": "background-color: #cdebd3"}
GROUP = ("suite", "mode", "dtype", "backend", "device", "variant")


def varying(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """`frame[columns]` less the configuration columns that hold one value throughout: a table as
    narrow as what tells its rows apart."""
    return frame[[c for c in columns if c not in GROUP or frame[c].nunique(dropna=False) > 1]]

st.title("Benchmark suite")
st.caption("PyTorch's benchmark harness (`benchmarks/dynamo`: timm_models, huggingface, torchbench) as HUD's "
           "compiler dashboard reads it: pass rate, geomean speedup, compilation latency and compression ratio per "
           "suite and release, HUD's regression rule, and each model's numbers beside the run that compiled it.")
data.stop_if_empty()
keys = data.run("dashboard/label_keys")
orders = [VERSION, *keys["label"].tolist()]
state.from_url("suite_key", "point", orders)
key = st.selectbox("A point is a", orders, key="suite_key",
                   help="HUD's points are nightlies: a label such as `nightly` makes each of its values a point")
state.to_url("point", None if key == VERSION else key)
point_key = None if key == VERSION else key
summary = data.run("harness/summary", key=point_key)
counts = data.run("dashboard/overview_counts").iloc[0]
if summary.empty:
    st.info("No benchmark harness results in this warehouse. Ingest the folder a harness job wrote its CSVs to "
            "(`--performance` and `--accuracy`, with TORCH_TRACE on to link each model to its compile), or run it "
            "under `iwh capture` (README: Benchmark harness).")
    data.show_sql("harness/summary")
    st.stop()
held = int(counts["harness_result_runs"])
st.caption(data.plain(
    f"{plural(int(summary['workloads'].sum()), 'workload')} in {plural(len(summary), 'suite point')}; "
    + (f"{plural(held, 'run')} {'holds' if held == 1 else 'hold'} harness results alone (a job's CSVs, CI's "
       "expected values) beside the compiles. " if held else "")
    + "The sidebar filters do not apply here but for its models, which narrow the per-model table."))

suites = sorted(summary["suite"].dropna().unique().tolist())
state.from_url("suite_suite", "suite", suites)
suite = st.selectbox("Suite", suites, key="suite_suite")
state.to_url("suite", suite)
shown = summary[summary["suite"] == suite]

st.subheader("Per release")
st.caption("One row per point and configuration (mode, dtype, backend, device, variant), over its workloads (a model "
           "each): a workload passes when its accuracy is pass, pass_due_to_skip or eager_variation and its speedup "
           "is not 0; geomean speedup, mean compilation latency (s) and compression ratio are over the passing "
           "workloads.")
data.table(varying(shown, ["point", "mode", "dtype", "backend", "device", "variant", "workloads", "passed_workloads",
                           "pass_rate", "geomean_speedup", "compilation_latency_s", "compression_ratio",
                           "dynamo_peak_mem_gb", "workloads_without_accuracy", "workloads_without_performance"]))
data.show_sql("harness/summary")

points = sorted(set(shown["point"].dropna()), key=release_key if point_key is None else str)
if len(points) < 2:
    st.info(f"HUD's regression rule compares two points; suite {data.plain(suite)} has {len(points)}.")
    base = head = points[0] if points else None
else:
    left, right = st.columns(2)
    state.from_url("suite_base", "base", points)
    state.from_url("suite_head", "head", points)
    base = left.selectbox("Baseline", points, index=len(points) - 2, key="suite_base")
    head = right.selectbox("Comparison", points, index=len(points) - 1, key="suite_head")
    state.to_url("base", base)
    state.to_url("head", head)
    st.subheader("HUD's regression rule")
    st.caption("Each metric of the comparison point against the baseline's times HUD's threshold (pass rate 0.9x, "
               "geomean speedup and compression ratio 0.95x, compilation latency 1.15x), as HUD's RegressionPolicy "
               "judges it: one point a side, no allowance for noise (`iwh compare` gates each workload's numbers "
               "only with several runs a side).")
    rule = data.run("harness/hud_regression", base=base, head=head, key=point_key)
    rule = varying(rule[rule["suite"] == suite], ["mode", "dtype", "backend", "device", "variant", "metric", "base",
                                                  "head", "limit_value", "rule", "verdict", "base_workloads",
                                                  "head_workloads"])
    readable, config = data.readable(rule.reset_index(drop=True))
    st.dataframe(readable.style.apply(lambda col: col.map(COLOURS).fillna(""), subset=["verdict"]).format(precision=4),
                 hide_index=True, width="stretch", column_config=config)
    data.show_sql("harness/hud_regression")

st.subheader("Per model")
st.caption("Each workload's latest rows at the comparison point: accuracy, speedup, latencies and Dynamo's counters, "
           "its speedup at the baseline beside, and the runs that compiled it: a link opens the run's kernels and "
           "graph breaks in the Run explorer. Pick a row to open its run here.")
models = data.run("harness/models", key=point_key, suite=suite)
at_head = models[models["point"] == head].copy()
at_base = models[models["point"] == base][["workload", "backend", "speedup"]].rename(columns={"speedup": "base_speedup"})
if base != head:
    at_head = at_head.merge(at_base, on=["workload", "backend"], how="left")
    at_head.insert(at_head.columns.get_loc("speedup"), "base_speedup", at_head.pop("base_speedup"))
picked = [m for m in (filters.current()["models"] or "").split(",") if m]
if picked:
    at_head = at_head[at_head["model"].isin(picked)]
for side in ("performance", "accuracy"):
    at_head[f"{side}_run"] = [f"explorer?run={r}" if isinstance(r, str) else None for r in at_head[f"{side}_run_id"]]
columns = list(varying(at_head, [c for c in (
    "model", "mode", "dtype", "device", "variant", "backend", "performance_run", "accuracy_run", "batch_size",
    "accuracy", "passed", "base_speedup", "speedup", "compilation_latency_s", "compression_ratio", "graph_breaks",
    "fallbacks_to_eager", "kernel_count", "run_graph_breaks") if c in at_head]).columns)
links = {f"{side}_run": st.column_config.LinkColumn(f"{side} run", display_text=r"explorer\?run=(.*)")
         for side in ("performance", "accuracy")}
event = data.table(at_head[columns].reset_index(drop=True), column_config=links, on_select="rerun",
                   selection_mode="single-row", key="suite_models")
rows = event.selection.rows if event else []
if rows:
    row = at_head.iloc[rows[0]]
    run_id = row["performance_run_id"] if isinstance(row["performance_run_id"], str) else row["accuracy_run_id"]
    if isinstance(run_id, str):
        st.caption(data.plain(f"{row['model']}: speedup {data.number(row['speedup'])}, its compile has "
                              f"{data.number(row['kernel_count'])} kernels and {data.number(row['run_graph_breaks'])} "
                              "graph breaks"))
        open_run_button(run_id, "suite_open_run")
    else:
        st.caption("No compile of this model was ingested beside its harness rows (the harness ran without "
                   "TORCH_TRACE, or its artifacts were not ingested).")
data.show_sql("harness/models")
if pd.isna(at_head["speedup"]).all() if len(at_head) else False:
    st.caption("No performance rows at this point: the harness ran `--accuracy` only.")
