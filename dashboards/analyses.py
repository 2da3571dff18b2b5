"""The analyses the pages show (`iwh compare`, its kernel and line diffs, `iwh changes`), run on
the dashboard's read-only connection and cached like its queries."""

from __future__ import annotations

import streamlit as st

from inductor_warehouse.dashboards.warehouse import CACHE_SECONDS, location, read


def compare_releases(base: str, head: str):
    """`iwh compare` (analysis/compare.py) on the dashboard's read-only connection."""
    return _compare(location().printable, base, head)


def kernel_changes(base_run: str, head_run: str, model: str):
    """`iwh compare --kernels` for one pair of runs, with each side's code (KernelCode) and the unified diff of changed
    kernels."""
    return _kernel_changes(location().printable, base_run, head_run, model)


# the warehouse path is part of the cache key: one process may serve (or test) several warehouses
@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _compare(db: str, base: str, head: str):
    from inductor_warehouse.analysis.compare import compare

    return read(lambda con: compare(con, base, head))


@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _kernel_changes(db: str, base_run: str, head_run: str, model: str):
    from inductor_warehouse.analysis.kernel_code import KernelCodes, code_diff
    from inductor_warehouse.analysis.kernel_diff import kernel_diff, pair_codes

    def work(con):
        diff = kernel_diff(con, base_run, head_run, model)
        codes = KernelCodes(con)
        # by position in diff.kernels: kernel names repeat across graphs (each graph counts from _0)
        pairs = {i: pair_codes(codes, diff.base_run, diff.head_run, diff.kernels[i])
                 for i in diff.code_changes + diff.meta_changes}
        return diff, pairs, {i: code_diff(*pair) for i, pair in pairs.items()}

    return read(work)


def line_changes(base_run: str, head_run: str, model: str, file: str, line: int):
    """`iwh compare --lineage FILE:LINE` for one pair of runs, with each side's code and the unified diff of each
    pair whose code changed."""
    return _line_changes(location().printable, base_run, head_run, model, file, line)


@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _line_changes(db: str, base_run: str, head_run: str, model: str, file: str, line: int):
    from inductor_warehouse.analysis.kernel_code import KernelCodes, code_diff
    from inductor_warehouse.analysis.kernel_diff import pair_codes
    from inductor_warehouse.analysis.line_diff import line_diff

    diff = _kernel_changes(db, base_run, head_run, model)[0]  # the kernel diff the page shows above, cached

    def work(con):
        result = line_diff(con, base_run, head_run, model, file, line, diff=diff)
        codes = KernelCodes(con)
        pairs = {i: pair_codes(codes, result.base_run, result.head_run, k.change)
                 for i, k in enumerate(result.kernels) if k.change.code_changed}
        return result, pairs, {i: code_diff(*pair) for i, pair in pairs.items()}

    return read(work)


def kernel_code(run_id: str, graph_id: str, kernel_name: str):
    """The code of one kernel as its run wrote it (analysis/kernel_code.py), or an identical kernel's kept text."""
    return _kernel_code(location().printable, run_id, graph_id, kernel_name)


@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _kernel_code(db: str, run_id: str, graph_id: str, kernel_name: str):
    from inductor_warehouse.analysis.kernel_code import KernelCodes

    return read(lambda con: KernelCodes(con).get(run_id, graph_id, kernel_name))


def graph_kernel_codes(run_id: str, graph_id: str):
    """kernel_code of every generated kernel of one graph, in definition order."""
    return _graph_kernel_codes(location().printable, run_id, graph_id)


@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _graph_kernel_codes(db: str, run_id: str, graph_id: str):
    from inductor_warehouse.analysis.kernel_code import KernelCodes

    return read(lambda con: KernelCodes(con).graph(run_id, graph_id))


def change_points(model: str, series_label: str | None):
    """`iwh changes` for one model (analysis/changes.py) on the dashboard's read-only connection."""
    return _change_points(location().printable, model, series_label)


@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _change_points(db: str, model: str, series_label: str | None):
    from inductor_warehouse.analysis.changes import changes

    return read(lambda con: changes(con, model, series_label))
