"""The Python API for notebooks and scripts.

    from inductor_warehouse import Warehouse
    wh = Warehouse("warehouse.duckdb")          # or "ducklake:postgres:dbname=iwh host=...", or $IWH_DB
    wh.query("fusion_rate_by_model_version", model="hf_bert")   # a canned query -> polars.DataFrame
    wh.sql("SELECT model, count(*) FROM runs GROUP BY ALL")     # ad hoc, read-only

A Warehouse reads: SQL on it reads only the warehouse (schema/readonly.py), so it cannot write,
ATTACH, reach other servers, read files, settings or secrets. Every query, canned or typed, stops
after `timeout` seconds (IWH_QUERY_TIMEOUT, 60 where unset) and fails past `memory`
(IWH_QUERY_MEMORY, 4GB): a notebook raises them by saying so, `Warehouse(path, timeout=600,
memory="16GB")`, or lifts the time limit with `timeout=0`. Opened on a file, it holds a read lock
that a writer waits for: close it (or use `with`) when done.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import duckdb
import polars as pl

from inductor_warehouse.schema import queries
from inductor_warehouse.store.bounds import Stuck, let_go, run_bounded, run_typed
from inductor_warehouse.store.connection import Params
from inductor_warehouse.store.location import Location, locate
from inductor_warehouse.store.opening import connect

T = TypeVar("T")


class Warehouse:
    def __init__(self, location: str | Location | None = None, *, wait: float | None = None,
                 timeout: float | None = None, memory: str | None = None):
        self.location = locate(location)
        self._wait, self.timeout, self._memory = wait, timeout, memory
        self._con: duckdb.DuckDBPyConnection | None = self._connect()

    def _connect(self) -> duckdb.DuckDBPyConnection:
        return connect(self.location, read_only=True, wait=self._wait, lockdown=True, memory=self._memory)

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The read-only, locked-down DuckDB connection (a new one after a statement got Stuck)."""
        if self._con is None:
            self._con = self._connect()
        return self._con

    @property
    def path(self) -> str:
        return self.location.printable

    def sql(self, text: str, params: Params | None = None, timeout: float | None = None) -> pl.DataFrame:
        """Ad hoc SQL: one read statement, stopped after `timeout` seconds (None: the Warehouse's,
        else IWH_QUERY_TIMEOUT or 60; 0: no limit), its check included; its result no larger than
        the Warehouse's memory limit."""
        table, _ = self._bounded(lambda con: run_typed(con, text, self._seconds(timeout), params))
        return pl.from_arrow(table.rename_columns(unique_names(table.column_names)))  # type: ignore[return-value]

    def query(self, name: str, **params: Any) -> pl.DataFrame:
        """The canned query `name` with `params`, bounded as `sql` is (by the Warehouse's timeout)."""
        return self._bounded(lambda con: run_bounded(con, lambda: queries.run(con, name, params).pl(), self.timeout))

    def read(self, work: Callable[[Warehouse], T], timeout: float | None = None) -> T:
        """`work(self)`, any reading of several queries (a comparison, a series of changes), within
        one time limit as `sql`'s: `timeout`, else the Warehouse's, else IWH_QUERY_TIMEOUT or 60."""
        return self._bounded(lambda con: run_bounded(con, lambda: work(self), self._seconds(timeout)))

    def _seconds(self, timeout: float | None) -> float | None:
        return timeout if timeout is not None else self.timeout

    def _bounded(self, work: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        con = self.con
        try:
            return work(con)
        except Stuck:
            self._con = None  # busy for good: the next call opens another
            let_go(con.close)
            raise

    @staticmethod
    def queries() -> list[queries.Query]:
        return queries.all_queries()

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def unique_names(names: list[str]) -> list[str]:
    """Column names a Polars frame takes, made as DuckDB's own `.pl()` makes them: a name met before
    (in any case) gets `_1`, `_2`, ... (`SELECT * FROM a JOIN b USING (k)` may repeat one)."""
    seen: set[str] = set()
    counts: dict[str, int] = {}
    out = []
    for name in names:
        candidate = name
        while candidate.lower() in seen:
            counts[name.lower()] = counts.get(name.lower(), 0) + 1
            candidate = f"{name}_{counts[name.lower()]}"
        seen.add(candidate.lower())
        out.append(candidate)
    return out
