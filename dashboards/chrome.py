"""What every page does around its tables: the SQL behind them, what to say when there is no
warehouse or nothing in it, and paging."""

from __future__ import annotations

import streamlit as st

from inductor_warehouse.dashboards.data import run
from inductor_warehouse.dashboards.warehouse import location
from inductor_warehouse.schema import queries
from inductor_warehouse.store.location import redact


def show_sql(*names: str) -> None:
    """The SQL behind what the page just showed, as Datasette shows it."""
    with st.expander("SQL behind this" if len(names) == 1 else f"SQL behind this ({len(names)} queries)"):
        for name in names:
            q = queries.get(name)
            st.caption(f"`{q.name}`: {q.title}  ·  `iwh query {q.name}`")
            st.code(q.sql, language="sql")


def warehouse_is_empty() -> bool:
    return not bool(run("dashboard/has_runs").iloc[0]["has_runs"])


def open_problem() -> str | None:
    """Why the warehouse cannot be shown, in words that say what to do; None when it can."""
    loc = location()
    if not loc.exists():
        return (f"No warehouse at `{loc.printable}`. Create one with `iwh ingest PATH --db {loc.printable}`, "
                "or point the dashboard at one with `iwh dashboard --db LOCATION`.")
    try:
        run("dashboard/filter_options")
    except Exception as e:  # an old or foreign file, an unreachable lake: the message names the cause
        return f"Cannot read the warehouse `{loc.printable}`: {type(e).__name__}: {redact(str(e))}"
    return None


def stop_if_empty() -> None:
    """Say plainly when there is nothing to show, and stop the page there."""
    if warehouse_is_empty():
        shown = location().printable
        st.info(f"The warehouse `{shown}` has no runs yet. Ingest some with "
                f"`iwh ingest PATH --db {shown}` (a run folder, a torch_compile_debug folder or a trace log).")
        st.stop()


def page_offset(key: str, page_size: int) -> int:
    """The offset of the page chosen with `pager(..., key)` (read before the query runs)."""
    return (int(st.session_state.get(key, 1)) - 1) * page_size


def pager(total: int, page_size: int, key: str) -> None:
    """A page picker under a large table; its choice is read by `page_offset` on the next run."""
    pages = max(1, -(-int(total) // page_size))
    if pages > 1:
        st.number_input(f"Page (of {pages}; {int(total):,} rows, {page_size} a page)", 1, pages, key=key)
