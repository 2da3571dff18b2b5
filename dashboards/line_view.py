"""One model line across two releases (the Compare page): the kernels the line became in the base
and head runs, side by side, paired as the kernel diff pairs them, each one click from the
provenance viewer, and the code of a changed pair below."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from inductor_warehouse.analysis.kernel_code import NORMALISED
from inductor_warehouse.analysis.line_diff import line_frame
from inductor_warehouse.dashboards import analyses, cells, chrome, data, state
from inductor_warehouse.dashboards.kernel_view import show_code
from inductor_warehouse.dashboards.model_lines import split_line
from inductor_warehouse.dashboards.navigation import VIEWER_COLUMN, kernel_graphs, viewer_url


def show_line_diff(base_run: str, head_run: str, model: str, key: str) -> None:
    lines = data.run("lineage/model_lines", run=head_run, base=base_run)
    if lines.empty:
        st.info("Neither run links a model line to its kernels (no provenance: INDUCTOR_PROVENANCE=1 with "
                "TORCH_TRACE or TORCH_COMPILE_DEBUG records it).")
        return
    # lines whose kernel count moved first, then the busiest
    lines = lines.assign(moved=lines["kernels_delta"].abs().fillna(0)).sort_values(
        ["moved", "kernels"], ascending=False, kind="stable")
    choices = [f"{f}:{n}" for f, n in zip(lines["file"], lines["line"], strict=True)]
    code = dict(zip(choices, lines["source_code"], strict=True))
    counts = {c: (b, h) for c, b, h in zip(choices, lines["base_kernels"], lines["kernels"], strict=True)}
    state.from_url(f"{key}_line", "line", choices)
    chosen = st.selectbox(
        "Model line", choices, key=f"{key}_line",
        format_func=lambda c: f"{Path(c.rpartition(':')[0]).name}:{c.rpartition(':')[2]}  {code.get(c) or ''}  "
                              f"({_count(counts[c][0])} -> {_count(counts[c][1])} kernels)",
        help="Lines whose kernel count changed first. Kernels of the line on each side, paired as the kernel "
             "diff above pairs them.")
    state.to_url("line", chosen)
    file, line = split_line(chosen)  # type: ignore[misc]
    result, pairs, unified = analyses.line_changes(base_run, head_run, model, file, line)
    frame = line_frame(result).to_pandas()
    if frame.empty:
        st.info(f"No kernel of either run came from {cells.plain(chosen)}.")
    else:
        for i, (side, run) in enumerate((("base", base_run), ("head", head_run))):
            graphs = kernel_graphs(run, result.diff.kernel_rows.get(run) if result.diff else None)
            frame.insert(i, f"{side}_viewer", [viewer_url(run, graphs.get((ph, k)), kernel=k) if isinstance(k, str)
                                               else None for ph, k in zip(frame["phase"], frame[f"{side}_kernel"],
                                                                          strict=True)])
        cells.table(frame, column_config={"base_viewer": VIEWER_COLUMN, "head_viewer": VIEWER_COLUMN})
    for note in result.notes:
        st.caption(cells.plain(note))
    changed = [i for i, k in enumerate(result.kernels) if k.change.code_changed]
    if changed:
        labels = {i: f"{result.kernels[i].change.phase}: {result.kernels[i].change.base_kernel} -> "
                     f"{result.kernels[i].change.head_kernel}" for i in changed}
        i = st.selectbox("Code of a pair", changed, format_func=cells.labelled(labels), key=f"{key}_pair")  # type: ignore[assignment]
        c = result.kernels[i].change
        left, right = st.columns(2)
        # not `code`: the model line picker's labels read that name
        for col, side, name, kernel_code in zip((left, right), ("base", "head"), (c.base_kernel, c.head_kernel),
                                                pairs[i], strict=True):
            show_code(col, side, name, kernel_code)
        with st.expander(f"Unified diff ({NORMALISED})", expanded=True):
            st.code(unified.get(i) or "(identical after normalisation)", language="diff")
    st.caption(cells.plain(f"iwh compare --base {base_run} --head {head_run} --model {model} --lineage "
                          f"{Path(file).name}:{line} --show-code"))
    chrome.show_sql("lineage/model_lines", "lineage/line_across_runs")


def _count(v) -> str:
    return "0" if v is None or pd.isna(v) else str(int(v))
