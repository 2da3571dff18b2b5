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
answer anyway and lets the connection go (`Stuck`). For a typed statement (`run_typed`) the limit
covers its check too, and the memory limit its result, which DuckDB's own limit does not hold
(`fetch_bounded`).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from typing import TypeVar

import duckdb
import pyarrow as pa

from inductor_warehouse.schema.bound_plan import check_bound_plan
from inductor_warehouse.schema.readonly import QueryRefused, ReadStatement, check_read_statement
from inductor_warehouse.store.connection import Config, Params, one_row, quiet, sql_literal
from inductor_warehouse.store.lake import LAKE

__all__ = ["QueryRefused", "ReadStatement", "Stuck", "Watch", "check_read_statement", "fetch_bounded", "let_go",
           "query_seconds", "read_memory", "run_bounded", "run_typed"]

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


def run_typed(con: duckdb.DuckDBPyConnection, sql: str, seconds: float | None = None, params: Params | None = None,
              max_rows: int | None = None, named_only: bool = False) -> tuple[pa.Table, int]:
    """A statement someone typed (`iwh sql`, the console, `Warehouse.sql`) run with `params` on `con`,
    all within the time limit: check_read_statement, then DuckDB's binder on `con` says what it reads
    (check_bound_plan; binding a lake's statement asks its catalog), then its result is fetched
    (fetch_bounded: at most `max_rows` rows, and no more bytes than the reader's memory limit).
    `named_only`: `params` may hold more names than the statement uses (the console's). Returns the
    rows and how many the statement gave in all (more than the rows when `max_rows` cut them)."""
    watch = Watch(on_connection=False)

    def checked() -> tuple[pa.Table, int]:
        statement = check_read_statement(sql, stopped=watch.stopped)
        values = params
        if named_only and isinstance(params, dict):
            values = {k: v for k, v in params.items() if k in statement.parameters}
        watch.enter(con)
        (database,) = one_row(con, "SELECT current_database()")
        check_bound_plan(con, statement.text, database, values, watch.stopped)
        return fetch_bounded(con, statement.text, values, max_rows)

    return run_bounded(con, checked, seconds, watch)


def run_bounded(con: duckdb.DuckDBPyConnection, work: Callable[[], T], seconds: float | None = None,
                watch: Watch | None = None) -> T:
    """`work()` (statements on `con`), interrupted after `seconds` (None: query_seconds(); 0 or less:
    no limit). With a `watch`, the work does work of its own first (a statement's check, which looks
    at watch.stopped) and says when it starts on `con` (watch.enter). A statement interrupted, or one
    that needs more memory than a reader has, raises QueryRefused saying so; one on `con` that does
    not stop raises Stuck."""
    seconds = query_seconds() if seconds is None else seconds
    watch = watch or Watch(on_connection=True)
    if seconds <= 0:
        return _translated(work, seconds)
    done: dict[str, T] = {}
    failed: list[BaseException] = []

    def started() -> T:
        if watch.on_connection:  # on `con` from the start
            watch.served = _served(con)
        return work()

    def run() -> None:
        try:
            done["value"] = _translated(started, seconds)
        except BaseException as e:
            failed.append(e)

    thread = threading.Thread(target=run, name="iwh-query", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        busy = watch.stop()
        if busy:
            con.interrupt()
        thread.join(INTERRUPT_GRACE_S)
        if thread.is_alive() and not busy:  # still checking the statement, which stops before `con`
            raise QueryRefused(_stopped(seconds))
    if thread.is_alive():
        where = ("" if watch.served is False else
                 " while it waited, maybe on a server that does not answer (the lake's catalog or storage)")
        raise Stuck(f"the query was stopped after {seconds:g} s (the limit: IWH_QUERY_TIMEOUT or --timeout){where}; "
                    "it did not stop at once, so its connection is let go. Narrow it with WHERE or LIMIT")
    if failed:
        raise failed[0]
    return done["value"]


class Watch:
    """Between a bounded run's thread and its clock: whether the time is up, and whether the work has
    started on the connection (only then can DuckDB interrupt it, and only then may it be left busy)."""

    def __init__(self, on_connection: bool):
        self._lock = threading.Lock()
        self._stopped, self.on_connection = False, on_connection
        self.served: bool | None = None  # whether the connection reads another server's database

    def stopped(self) -> bool:
        return self._stopped

    def enter(self, con: duckdb.DuckDBPyConnection) -> None:
        """The work starts on the connection `con`, unless the time is up."""
        with self._lock:
            if self._stopped:
                raise duckdb.InterruptException("stopped before it ran")
            self.on_connection = True
        # asked within the limit, on the connection: a lake's may not answer even this
        self.served = _served(con)

    def stop(self) -> bool:
        """The time is up: whether the work is on the connection."""
        with self._lock:
            self._stopped = True
            return self.on_connection


def _served(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether `con` reads a database that another server holds (a lake's catalog or storage)."""
    return bool(one_row(con, "SELECT count(*) FROM duckdb_databases() WHERE type <> 'duckdb'")[0])


def fetch_bounded(con: duckdb.DuckDBPyConnection, sql: str, params: Params | None = None,
                  max_rows: int | None = None) -> tuple[pa.Table, int]:
    """The result of `sql` as Arrow record batches: at most `max_rows` rows (None: all; the rest are
    counted, not kept), and QueryRefused once what is kept passes the reader's memory limit, which
    DuckDB's own limit (its operators') does not hold to a result. Rows come in small batches where
    a column's width varies (text, lists), so that one batch cannot be much past the limit."""
    limit = _memory_bytes(one_row(con, "SELECT current_setting('memory_limit')")[0])
    result = con.execute(sql, params or None)
    fixed = all(_FIXED_WIDTH.match(str(d[1])) for d in con.description or [])
    reader = result.to_arrow_reader(FIXED_BATCH_ROWS if fixed else VARIABLE_BATCH_ROWS)
    batches, kept, rows, size = [], 0, 0, 0
    for batch in reader:
        rows += batch.num_rows
        if max_rows is not None and kept >= max_rows:
            continue
        if max_rows is not None and kept + batch.num_rows > max_rows:
            batch = batch.slice(0, max_rows - kept)
        batches.append(batch)
        kept += batch.num_rows
        size += batch.nbytes
        if limit is not None and size > limit:
            raise QueryRefused(_over_memory(f"Its result passed {_shown(limit)} after {kept:,} rows"))
    return pa.Table.from_batches(batches, schema=reader.schema), rows


FIXED_BATCH_ROWS, VARIABLE_BATCH_ROWS = 2048, 256
# DuckDB's types whose values all take the same bytes (numbers, times, booleans, UUIDs, decimals)
_FIXED_WIDTH = re.compile(r"^(BOOLEAN|U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|FLOAT|DOUBLE|REAL|DECIMAL(\(.*\))?|DATE|"
                          r"TIME(STAMP)?(_[A-Z]+| WITH TIME ZONE)?|INTERVAL|UUID)$", re.I)
_UNITS = {"": 1, "B": 1, "BYTES": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40, "PIB": 2**50}


def _memory_bytes(setting: str) -> int | None:
    """DuckDB's memory_limit setting as it reads back (`3.7 GiB`, `61.0 MiB`), in bytes; None for no limit."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", str(setting))
    if not m or m[2].upper() not in _UNITS:
        return None
    return int(float(m[1]) * _UNITS[m[2].upper()])


def _shown(size: int) -> str:
    return next(f"{size / 2**p:.1f} {u}" for p, u in ((40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB"), (0, "bytes"))
                if size >= 2**p or p == 0)


def _translated(work: Callable[[], T], seconds: float) -> T:
    try:
        return work()
    except Exception as e:
        cause = getattr(e, "orig", None) or e  # SQLAlchemy wraps the driver's error
        if isinstance(cause, duckdb.InterruptException):
            raise QueryRefused(_stopped(seconds)) from e
        if isinstance(cause, duckdb.OutOfMemoryException):
            raise QueryRefused(_over_memory(str(cause).splitlines()[0])) from e
        raise


def _over_memory(detail: str) -> str:
    return ("the query needed more than the memory a reader may use (IWH_QUERY_MEMORY, 4GB where unset); "
            f"narrow it with WHERE or LIMIT. {detail}")


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
