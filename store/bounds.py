"""Bounds on what readers run: the SQL people type (`iwh sql`, the dashboard's SQL console,
`Warehouse.sql`) and the canned queries alike. What typed SQL may name and bind to
(`schema/readonly.py`), a time limit, a memory limit, and what a locked-down reader's connection
may do at all (`lock_down_*`: read the warehouse and nothing else).

The time limit is IWH_QUERY_TIMEOUT seconds (60 where unset), the memory limit IWH_QUERY_MEMORY
(4GB), read when a reader opens or a query starts: a caller may give others (a notebook's
`Warehouse(timeout=..., memory=...)`, `iwh sql --timeout`), never none without saying so (0).
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

from inductor_warehouse.schema.bound_plan import check_bound_plan
from inductor_warehouse.schema.readonly import QueryRefused, ReadStatement, check_read_statement
from inductor_warehouse.store.connection import Config, Params, one_row, quiet, sql_literal
from inductor_warehouse.store.lake import LAKE

__all__ = ["QueryRefused", "ReadStatement", "Stuck", "check_read_statement", "let_go", "query_seconds", "read_memory",
           "run_bounded", "run_typed"]

DEFAULT_SECONDS = 60.0
DEFAULT_MEMORY = "4GB"
# a reader's connection, from its start: no extension loaded that this code did not load, no Python
# variable read as a table (DuckDB scans a caller's data frames by name), no secret of the user's
# DuckDB (persistent secrets in ~/.duckdb) loaded, and none shown unredacted
READER_CONFIG: Config = {"autoload_known_extensions": False, "autoinstall_known_extensions": False,
                         "allow_community_extensions": False, "python_enable_replacements": False,
                         "allow_persistent_secrets": False, "allow_unredacted_secrets": False}
INTERRUPT_GRACE_S = 1.0  # how long an interrupted statement has to stop before its connection is let go
T = TypeVar("T")


def query_seconds() -> float:
    """A reader's time limit, in seconds: IWH_QUERY_TIMEOUT, or 60."""
    return float(os.environ.get("IWH_QUERY_TIMEOUT") or DEFAULT_SECONDS)


def read_memory() -> str:
    """A reader's memory limit: IWH_QUERY_MEMORY, or 4GB."""
    return os.environ.get("IWH_QUERY_MEMORY") or DEFAULT_MEMORY


class Stuck(QueryRefused):
    """The statement did not stop when interrupted: its connection is still busy with it and must
    not be used again (`let_go`)."""


def run_typed(con: duckdb.DuckDBPyConnection, statement: ReadStatement, work: Callable[[str], T],
              seconds: float | None = None, params: Params | None = None) -> T:
    """`work(text)`, which runs the text of a statement someone typed (check_read_statement let it
    through) with `params`, once DuckDB's binder on `con` says what it reads (check_bound_plan); both
    within the time limit, as binding a lake's statement asks its catalog."""
    def checked() -> T:
        (database,) = one_row(con, "SELECT current_database()")
        check_bound_plan(con, statement.text, database, params)
        return work(statement.text)

    return run_bounded(con, checked, seconds)


def run_bounded(con: duckdb.DuckDBPyConnection, work: Callable[[], T], seconds: float | None = None) -> T:
    """`work()` (statements on `con`), interrupted after `seconds` (None: query_seconds(); 0 or less:
    no limit). A statement interrupted, or one that needs more memory than a reader has, raises
    QueryRefused saying so; one that does not stop raises Stuck."""
    seconds = query_seconds() if seconds is None else seconds
    if seconds <= 0:
        return _translated(work, seconds)
    done: dict[str, T] = {}
    failed: list[BaseException] = []

    def run() -> None:
        try:
            done["value"] = _translated(work, seconds)
        except BaseException as e:
            failed.append(e)

    thread = threading.Thread(target=run, name="iwh-query", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        con.interrupt()
        thread.join(INTERRUPT_GRACE_S)
    if thread.is_alive():
        raise Stuck(f"the query was stopped after {seconds:g} s (the limit: IWH_QUERY_TIMEOUT or --timeout) while it "
                    "waited on a server that does not answer (the lake's catalog or storage)")
    if failed:
        raise failed[0]
    return done["value"]


def _translated(work: Callable[[], T], seconds: float) -> T:
    try:
        return work()
    except Exception as e:
        cause = getattr(e, "orig", None) or e  # SQLAlchemy wraps the driver's error
        if isinstance(cause, duckdb.InterruptException):
            raise QueryRefused(_stopped(seconds)) from e
        if isinstance(cause, duckdb.OutOfMemoryException):
            raise QueryRefused("the query needed more than the memory a reader may use (IWH_QUERY_MEMORY, 4GB "
                               "where unset); narrow it with WHERE or LIMIT. "
                               f"{str(cause).splitlines()[0]}") from e
        raise


def _stopped(seconds: float) -> str:
    return (f"the query was stopped after {seconds:g} s (the limit: IWH_QUERY_TIMEOUT or --timeout); "
            "narrow it with WHERE or LIMIT")


def let_go(close: Callable[[], object]) -> None:
    """Close a connection left busy by a Stuck statement, in a thread of its own: DuckDB's close
    waits for the statement, which may never end."""
    threading.Thread(target=close, name="iwh-let-go", daemon=True).start()


def reader_config(lake: bool, memory: str | None = None) -> Config:
    """A locked-down reader's settings when it connects. A file's settings are the database's, shared
    by every connection of this process to it, so they are given when it is opened; a lake's data
    paths are known only after the ATTACH (lock_down_lake)."""
    if lake:
        return dict(READER_CONFIG)
    return {**READER_CONFIG, "enable_external_access": False, "memory_limit": memory or read_memory()}


def lock_down_file(con: duckdb.DuckDBPyConnection) -> None:
    """A file reader's connection: quiet, then no SQL on it may change a setting (it could turn
    external access back on). Once one connection locks the process's shared database, the next
    cannot SET."""
    locked = one_row(con, "SELECT current_setting('lock_configuration')")[0]
    if not locked:
        quiet(con)
        con.execute("SET lock_configuration = true")


def lock_down_lake(con: duckdb.DuckDBPyConnection, memory: str | None = None) -> None:
    """From here on, SQL reads the lake and nothing else. Its data files stay readable through
    allowed_directories (which DuckDB also lets COPY write to: a dashboard's own process should
    have read-only access to them, and a read-only PostgreSQL role; docs/team.md).
    Set after the ATTACH, which needs the extensions and the catalog's connection."""
    (data_path,) = one_row(con, f"SELECT value FROM __ducklake_metadata_{LAKE}.ducklake_metadata WHERE key = 'data_path'")
    con.execute(f"SET allowed_directories = [{sql_literal(data_path)}]")
    con.execute("SET enable_external_access = false")
    con.execute(f"SET memory_limit = {sql_literal(memory or read_memory())}")
    con.execute("SET lock_configuration = true")
