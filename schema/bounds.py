"""Bounds on SQL that people type (`iwh sql`, the dashboard's SQL console, `Warehouse.sql`): what it
may name (`schema/readonly.py`), a time limit, and the memory limit every reader connection has
(READ_MEMORY).

The time limit holds for every statement, including one that DuckDB cannot interrupt (a read
waiting on a catalog or storage server that never answers): the statement runs in a thread of its
own, is interrupted at the limit, and when it has not stopped a moment later its caller gets the
answer anyway and lets the connection go (`Stuck`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TypeVar

import duckdb

from inductor_warehouse.schema.readonly import QueryRefused, check_read_statement
from inductor_warehouse.schema.warehouse import READ_MEMORY

__all__ = ["QUERY_SECONDS", "QueryRefused", "Stuck", "check_read_statement", "let_go", "run_bounded"]

QUERY_SECONDS = float(os.environ.get("IWH_QUERY_TIMEOUT", "30"))
INTERRUPT_GRACE_S = 1.0  # how long an interrupted statement has to stop before its connection is let go
T = TypeVar("T")


class Stuck(QueryRefused):
    """The statement did not stop when interrupted: its connection is still busy with it and must
    not be used again (`let_go`)."""


def run_bounded(con: duckdb.DuckDBPyConnection, work: Callable[[], T], seconds: float | None = None) -> T:
    """`work()` (statements on `con`), interrupted after `seconds` (QUERY_SECONDS; 0 or less: no
    limit). A statement interrupted, or one that needs more memory than a reader has, raises
    QueryRefused saying so; one that does not stop raises Stuck."""
    seconds = QUERY_SECONDS if seconds is None else seconds
    if seconds <= 0:
        return _translated(work, seconds)
    done: dict = {}

    def run() -> None:
        try:
            done["value"] = _translated(work, seconds)
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            done["error"] = e

    thread = threading.Thread(target=run, name="iwh-query", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        con.interrupt()
        thread.join(INTERRUPT_GRACE_S)
    if thread.is_alive():
        raise Stuck(f"the query was stopped after {seconds:g} s (the limit: IWH_QUERY_TIMEOUT or --timeout) while it "
                    "waited on a server that does not answer (the lake's catalog or storage)")
    if "error" in done:
        raise done["error"]
    return done["value"]


def _translated(work: Callable[[], T], seconds: float) -> T:
    try:
        return work()
    except Exception as e:
        cause = getattr(e, "orig", None) or e  # SQLAlchemy wraps the driver's error
        if isinstance(cause, duckdb.InterruptException):
            raise QueryRefused(_stopped(seconds)) from e
        if isinstance(cause, duckdb.OutOfMemoryException):
            raise QueryRefused(f"the query needed more than the {READ_MEMORY} a reader may use "
                               f"(IWH_QUERY_MEMORY); narrow it with WHERE or LIMIT. {str(cause).splitlines()[0]}") from e
        raise


def _stopped(seconds: float) -> str:
    return (f"the query was stopped after {seconds:g} s (the limit: IWH_QUERY_TIMEOUT or --timeout); "
            "narrow it with WHERE or LIMIT")


def let_go(close: Callable[[], object]) -> None:
    """Close a connection left busy by a Stuck statement, in a thread of its own: DuckDB's close
    waits for the statement, which may never end."""
    threading.Thread(target=close, name="iwh-let-go", daemon=True).start()
