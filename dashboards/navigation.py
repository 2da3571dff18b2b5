"""Opening a run in the Run explorer from any page, and links into its provenance viewer."""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

EXPLORER = "sections/explorer.py"
RUN_KEY = "explore_run"
VIEWER_TAB = "Provenance"
# a table column of viewer_url()s: one click opens the viewer on that row's kernel or line
VIEWER_COLUMN = st.column_config.LinkColumn("viewer", display_text="open", width="small",
                                            help="the provenance viewer on this kernel or line")


def open_run_button(run_id: str | None, key: str) -> None:
    if run_id and st.button(f"Open run `{run_id}` in the Run explorer", key=key, type="primary"):
        st.session_state[RUN_KEY] = run_id
        st.switch_page(EXPLORER)


def viewer_url(run_id: str, graph_id: str | None = None, kernel: str | None = None, line: str | None = None) -> str:
    """The Run explorer's address opened on the provenance viewer of a run's graph, a kernel or a
    model line (`FILE:LINE`) chosen: what every page links to, and what a shared view is."""
    params = {"run": run_id, "graph": graph_id, "kernel": kernel, "line": line, "tab": VIEWER_TAB}
    return "explorer?" + urlencode({k: v for k, v in params.items() if v is not None})


def kernel_graphs(run_id: str, rows: list[dict] | None = None) -> dict[tuple, str]:
    """(phase, kernel) -> the graph of the run that holds it: the kernel diff names kernels by phase.
    `rows`: the run's compare/kernels rows, where a kernel diff has read them already."""
    from inductor_warehouse.dashboards import data

    if rows is not None:
        return {(r["phase"], r["kernel_name"]): r["graph_id"] for r in rows}
    frame = data.run("compare/kernels", run=run_id)
    return {(r.phase, r.kernel_name): r.graph_id for r in frame.itertuples()}
