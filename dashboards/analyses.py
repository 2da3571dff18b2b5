"""The analyses the pages show (`iwh compare`, its kernel and line diffs, `iwh changes`), run on
the dashboard's read-only connection and cached like its queries."""

from __future__ import annotations

import streamlit as st

from inductor_warehouse.dashboards.warehouse import CACHE_SECONDS, location, read


def compare_releases(base: str, head: str):
    """`iwh compare` (analysis/compare.py) on the dashboard's read-only connection."""
    return _compare(location().printable, base, head)


def kernel_changes(base_run: str, head_run: str, model: str):
    """`iwh compare --kernels` for one pair of runs, with the sources and unified diff of changed kernels."""
    return _kernel_changes(location().printable, base_run, head_run, model)


# the warehouse path is part of the cache key: one process may serve (or test) several warehouses
@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _compare(db: str, base: str, head: str):
    from inductor_warehouse.analysis.compare import compare

    return read(lambda con: compare(con, base, head))


@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _kernel_changes(db: str, base_run: str, head_run: str, model: str):
    from inductor_warehouse.analysis.kernel_diff import code_diff, kernel_diff, kernel_source

    def work(con):
        diff = kernel_diff(con, base_run, head_run, model)
        sources = {h: kernel_source(con, h) for i in diff.code_changes + diff.meta_changes
                   for h in (diff.kernels[i].base_hash, diff.kernels[i].head_hash)}
        # by position in diff.kernels: kernel names repeat across graphs (each graph counts from _0)
        unified = {i: code_diff(con, diff.kernels[i]) for i in diff.code_changes + diff.meta_changes}
        return diff, sources, unified

    return read(work)


def line_changes(base_run: str, head_run: str, model: str, file: str, line: int):
    """`iwh compare --lineage FILE:LINE` for one pair of runs, with the unified diff of each pair whose code changed."""
    return _line_changes(location().printable, base_run, head_run, model, file, line)


@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _line_changes(db: str, base_run: str, head_run: str, model: str, file: str, line: int):
    from inductor_warehouse.analysis.kernel_diff import code_diff, kernel_source
    from inductor_warehouse.analysis.line_diff import line_diff

    diff = _kernel_changes(db, base_run, head_run, model)[0]  # the kernel diff the page shows above, cached

    def work(con):
        result = line_diff(con, base_run, head_run, model, file, line, diff=diff)
        changed = [i for i, k in enumerate(result.kernels) if k.change.code_changed]
        sources = {h: kernel_source(con, h) for i in changed
                   for h in (result.kernels[i].change.base_hash, result.kernels[i].change.head_hash)}
        unified = {i: code_diff(con, result.kernels[i].change) for i in changed}
        return result, sources, unified

    return read(work)


def change_points(model: str, series_label: str | None):
    """`iwh changes` for one model (analysis/changes.py) on the dashboard's read-only connection."""
    return _change_points(location().printable, model, series_label)


@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _change_points(db: str, model: str, series_label: str | None):
    from inductor_warehouse.analysis.changes import changes

    return read(lambda con: changes(con, model, series_label))
