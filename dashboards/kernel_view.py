"""The kernel-level diff of two runs of one model, shown the same wherever a page needs it (Compare
releases, What changed when): kernel counts, the kernel table, fusion groups that split or merged,
autotune winners that changed, and the code of a changed kernel side by side."""

from __future__ import annotations

import streamlit as st

from analysis.compare import CHANGED, change_label
from analysis.render import autotune_frame, fusion_frame, kernel_frame
from dashboards import data


def show_kernel_diff(base_run: str, head_run: str, model: str, key: str) -> None:
    diff, sources, unified = data.kernel_changes(base_run, head_run, model)
    counts = diff.counts()
    cols = st.columns(4)
    for col, status in zip(cols, ("changed", "added", "removed", "unchanged"), strict=True):
        col.metric(f"{status.capitalize()} kernels", counts[status])
    st.caption(data.plain(f"base run {diff.base_run} · head run {diff.head_run}; generated kernels matched by "
                          "signature, then by normalised source hash"))
    for note in diff.notes:
        st.caption(data.plain(note))
    kernels = kernel_frame(diff).to_pandas()
    if kernels.empty:
        st.success("Every kernel is the same on both sides.")
    else:
        st.dataframe(kernels, hide_index=True, width="stretch")
    fusions = fusion_frame(diff).to_pandas()
    if len(fusions):
        st.markdown("**Fusion groups that split or merged**")
        st.dataframe(fusions, hide_index=True, width="stretch")
    tuned = autotune_frame(diff).to_pandas()
    if len(tuned):
        st.markdown("**Autotune winners that changed**")
        st.dataframe(tuned, hide_index=True, width="stretch")
    changed = [i for i, k in enumerate(diff.kernels) if k.status == CHANGED]
    if not changed:
        return
    names = {change_label(diff.kernels[i]): i for i in changed}
    index = names[st.selectbox("Changed kernel", list(names), key=f"{key}_kernel")]
    k = diff.kernels[index]
    code_left, code_right = st.columns(2)
    code_left.caption(data.plain(f"base: {k.base_kernel}"))
    code_left.code(sources.get(k.base_hash) or "", language=data.code_language(sources.get(k.base_hash)),
                   line_numbers=True)
    code_right.caption(data.plain(f"head: {k.head_kernel}"))
    code_right.code(sources.get(k.head_hash) or "", language=data.code_language(sources.get(k.head_hash)),
                    line_numbers=True)
    with st.expander("Unified diff", expanded=True):
        st.code(unified[index] or "(identical after normalisation)", language="diff")
