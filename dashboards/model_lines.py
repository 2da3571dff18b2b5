"""The model's own view (the Run explorer's Model lines tab): each line of the model's code that
became kernels, with how many and how much profiled time they account for, per run and against
another run of the same model; each line one click from the provenance viewer."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from inductor_warehouse.dashboards import cells, chrome, data
from inductor_warehouse.dashboards.navigation import VIEWER_COLUMN, kernel_graphs, viewer_url


def split_line(text: str | None) -> tuple[str, int] | None:
    """`FILE:LINE` -> (file, line); None when it is not one."""
    file, _, line = (text or "").rpartition(":")
    return (file, int(line)) if file and line.isdigit() else None


def line_graph(run_id: str, graphs) -> str | None:
    """The graph a URL without one means: the first of the run whose kernels its model line
    (`line=FILE:LINE`) became, or the first that holds its kernel (`kernel=`): a link from a graph
    break's user line names the run and the line, not the graph."""
    kernel = st.query_params.get("kernel")
    if kernel:
        found = [g for (_, k), g in kernel_graphs(run_id).items() if k == kernel]
        return next((g for g in found if g in graphs), None)
    where = split_line(st.query_params.get("line"))
    if where is None:
        return None
    rows = data.run("lineage/source_line_kernels", run=run_id, file=where[0], line=where[1])
    found = [g for gs in rows["graphs"] for g in gs] if not rows.empty else []
    return next((g for g in found if g in graphs), None)


def show_model_lines(run_id: str, model: str) -> None:
    others = data.run("explore/runs", models=model, limit=200)
    others = others[others["run_id"] != run_id]
    labels = {o.run_id: f"{cells.or_missing(o.compiler_version, 'unknown version')} · {o.workload} · {o.run_id}"
              for o in others.itertuples()}
    base = st.selectbox("Compare with another run of this model", list(labels), index=None, format_func=cells.labelled(labels),
                        key="lines_base", placeholder="none: this run's lines alone")
    lines = data.run("lineage/model_lines", run=run_id, base=base)
    if lines.empty:
        st.info("No line of this run's model is linked to a kernel: the run has no provenance (INDUCTOR_PROVENANCE=1 "
                "with TORCH_TRACE or TORCH_COMPILE_DEBUG records it; `iwh capture` sets them).")
        chrome.show_sql("lineage/model_lines")
        return
    profiled = lines["kernel_us"].notna().any()
    order = "kernel_us" if profiled else "kernels"
    lines = lines.sort_values(order, ascending=False, na_position="last", kind="stable")
    lines.insert(0, "viewer", [viewer_url(run_id, gs[0] if len(gs) else None, line=f"{f}:{n}")
                               for f, n, gs in zip(lines["file"], lines["line"], lines["graphs"], strict=True)])
    lines["file"] = [f.rsplit("/", 1)[-1] for f in lines["file"]]
    if not profiled:
        st.caption("This run has no profiled kernel time (no profile, or a CPU profile: its C++ kernels are not "
                   "profiler events): lines are ranked by kernel count.")
    hidden = [] if base else ["base_kernels", "base_kernel_us", "kernels_delta", "kernel_us_delta", "base_kernel_names"]
    cells.table(lines.drop(columns=hidden + ["graphs"]), column_config={"viewer": VIEWER_COLUMN})
    if base and pd.notna(lines["kernels_delta"]).any():
        moved = lines[lines["kernels_delta"] != 0]
        st.caption(f"{len(moved):,} of {len(lines):,} lines became a different number of kernels than in run {base}.")
    chrome.show_sql("lineage/model_lines")
