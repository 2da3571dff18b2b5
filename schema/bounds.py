"""Bounds on SQL that people type (`iwh sql`, the dashboard's SQL console, `Warehouse.sql`): one
read statement, a time limit, and the memory limit every reader connection has (READ_MEMORY).

The connection is already read-only and locked down (no writes, ATTACH, files or settings); these
bounds keep one runaway query from holding a CLI or a dashboard's server thread: after the limit
it is interrupted, and its error says so.
"""

from __future__ import annotations

import contextlib
import os
import threading

import duckdb

from schema.warehouse import READ_MEMORY

QUERY_SECONDS = float(os.environ.get("IWH_QUERY_TIMEOUT", "30"))
READ_STATEMENTS = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}


class QueryRefused(duckdb.Error):
    """SQL the warehouse will not run for a reader; the message says why and what it takes."""


def check_read_statement(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """One SELECT (WITH, FROM, VALUES, SHOW, DESCRIBE, SUMMARIZE, PRAGMA ... included) or EXPLAIN."""
    statements = con.extract_statements(sql)
    if len(statements) != 1:
        raise QueryRefused(f"one statement at a time, please ({len(statements)} given)")
    kind = statements[0].type
    if kind not in READ_STATEMENTS:
        raise QueryRefused(f"the warehouse is read-only here: {kind.name} statements are not run "
                           "(SELECT, SHOW, DESCRIBE, SUMMARIZE and EXPLAIN are)")


@contextlib.contextmanager
def bounded(con: duckdb.DuckDBPyConnection, seconds: float | None = None):
    """Interrupt what `con` runs after `seconds` (QUERY_SECONDS; 0 or less: no limit). A query
    interrupted, or one that needs more memory than a reader has, raises QueryRefused saying so."""
    seconds = QUERY_SECONDS if seconds is None else seconds
    timer = threading.Timer(seconds, con.interrupt) if seconds > 0 else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    try:
        yield
    except Exception as e:
        cause = getattr(e, "orig", None) or e  # SQLAlchemy wraps the driver's error
        if isinstance(cause, duckdb.InterruptException):
            raise QueryRefused(f"the query was stopped after {seconds:g} s (the limit: IWH_QUERY_TIMEOUT or "
                               "--timeout); narrow it with WHERE or LIMIT") from e
        if isinstance(cause, duckdb.OutOfMemoryException):
            raise QueryRefused(f"the query needed more than the {READ_MEMORY} a reader may use "
                               f"(IWH_QUERY_MEMORY); narrow it with WHERE or LIMIT. {str(cause).splitlines()[0]}") from e
        raise
    finally:
        if timer is not None:
            timer.cancel()
