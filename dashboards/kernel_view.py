"""The kernel-level diff of two runs of one model, shown the same wherever a page needs it (Compare
releases, What changed when): kernel counts, the kernel table, fusion groups that split or merged,
Triton launch configs and autotune winners that changed, and the code of a changed kernel side by side."""

from __future__ import annotations

import streamlit as st

from inductor_warehouse.analysis.kernel_code import NORMALISED, KernelCode
from inductor_warehouse.analysis.kernel_diff import change_label
from inductor_warehouse.analysis.kernel_match import META, STATUSES
from inductor_warehouse.analysis.render import autotune_frame, fusion_frame, kernel_frame, triton_frame
from inductor_warehouse.dashboards import analyses, cells
from inductor_warehouse.dashboards.navigation import VIEWER_COLUMN, kernel_graphs, viewer_url


def show_kernel_diff(base_run: str, head_run: str, model: str, key: str) -> None:
    diff, pairs, unified = analyses.kernel_changes(base_run, head_run, model)
    counts = diff.counts()
    cols = st.columns(len(STATUSES))
    for col, status in zip(cols, STATUSES, strict=True):
        col.metric(f"{status.capitalize()}", counts[status], help=f"generated kernels {status}"
                   + (": their code differs in metadata alone (inductor_meta, triton_meta)" if status == META else ""))
    st.caption(cells.plain(f"base run {diff.base_run} · head run {diff.head_run}; generated kernels paired by name "
                          "and normalised source hash, then by structure (lineage, source nodes, ATen ops, or "
                          "the ops their fused names list): renamed is the same fusion under a new name"))
    for note in diff.notes:
        st.caption(cells.plain(note))
    kernels = kernel_frame(diff).to_pandas()
    if kernels.empty:
        st.success("Every kernel is the same on both sides.")
    else:
        # each side's kernel opened in the provenance viewer of its own run
        for side, run in (("base", diff.base_run), ("head", diff.head_run)):
            graphs = kernel_graphs(run, diff.kernel_rows.get(run))
            kernels.insert(0 if side == "base" else 1, f"{side}_viewer", [
                viewer_url(run, graphs.get((ph, k)), kernel=k) if isinstance(k, str) else None
                for ph, k in zip(kernels["phase"], kernels[f"{side}_kernel"], strict=True)])
        cells.table(kernels, column_config={"base_viewer": VIEWER_COLUMN, "head_viewer": VIEWER_COLUMN})
    fusions = fusion_frame(diff).to_pandas()
    if len(fusions):
        st.markdown("**Fusion groups that split or merged**")
        cells.table(fusions)
    launches = triton_frame(diff).to_pandas()
    if len(launches):
        st.markdown("**Triton launch configs that changed** (warps, stages, shared memory in bytes, registers; "
                    "`?`: the artifacts do not say)")
        cells.table(launches)
    tuned = autotune_frame(diff).to_pandas()
    if len(tuned):
        st.markdown("**Autotune winners that changed**")
        cells.table(tuned)
    meta = diff.meta_changes and st.toggle(f"Also the {len(diff.meta_changes)} kernels whose metadata alone changed",
                                           key=f"{key}_meta")
    changed = sorted(diff.code_changes + (diff.meta_changes if meta else []))
    if not changed:
        return
    names = {change_label(diff.kernels[i]): i for i in changed}
    index = names[st.selectbox("Kernel whose code changed", list(names), key=f"{key}_kernel")]  # type: ignore[index]
    k = diff.kernels[index]
    # the diff at the page's full width first; each side's whole code below it, one at a time
    st.caption(f"The diff of each side's own code, {NORMALISED}.")
    st.code(unified[index] or "(identical after normalisation)", language="diff")
    for tab, side, name, code in zip(st.tabs(["Base code", "Head code"]), ("base", "head"), (k.base_kernel, k.head_kernel),
                                     pairs[index], strict=True):
        show_code(tab, side, name, code)


def show_code(where, side: str, name: str | None, code: KernelCode | None) -> None:
    """One side's code as its run wrote it, captioned with the kernel's name, and with what it is when
    it is an identical kernel's kept text rather than its own."""
    where.caption(cells.plain(f"{side}: {name}" + (f". {code.note}" if code and code.note else "")))
    text = code.text if code else None
    where.code(text or "", language=cells.code_language(text), line_numbers=True)
