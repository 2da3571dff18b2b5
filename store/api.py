"""The Python API for notebooks and scripts.

    from inductor_warehouse import Warehouse
    wh = Warehouse("warehouse.duckdb")          # or "ducklake:postgres:dbname=iwh host=...", or $IWH_DB
    wh.query("fusion_rate_by_model_version", model="hf_bert")   # a canned query -> polars.DataFrame
    wh.sql("SELECT model, count(*) FROM runs GROUP BY ALL")     # ad hoc, read-only

A Warehouse reads: SQL on it names only what a read of the warehouse needs (schema/readonly.py), so
it cannot write, ATTACH, reach other servers, read files, settings or secrets. Opened on a file, it
holds a read lock that a writer waits for: close it (or use `with`) when done.
"""

from __future__ import annotations

import duckdb
import polars as pl

from inductor_warehouse.schema import queries
from inductor_warehouse.store.bounds import Stuck, check_read_statement, let_go, run_bounded
from inductor_warehouse.store.location import Location, locate
from inductor_warehouse.store.opening import connect


class Warehouse:
    def __init__(self, location: str | Location | None = None, *, wait: float | None = None):
        self.location = locate(location)
        self._wait = wait
        self._con: duckdb.DuckDBPyConnection | None = connect(self.location, read_only=True, wait=wait, lockdown=True)

    @property
    def con(self) -> duckdb.DuckDBPyConnection:
        """The read-only, locked-down DuckDB connection (a new one after a statement got Stuck)."""
        if self._con is None:
            self._con = connect(self.location, read_only=True, wait=self._wait, lockdown=True)
        return self._con

    @property
    def path(self) -> str:
        return self.location.printable

    def sql(self, text: str, params: dict | list | None = None, timeout: float | None = 0) -> pl.DataFrame:
        """Ad hoc SQL: one read statement; `timeout` seconds (0: none, None: IWH_QUERY_TIMEOUT)."""
        check_read_statement(text)
        con = self.con
        try:
            return run_bounded(con, lambda: frame(con, text, params), timeout)
        except Stuck:
            self._con = None  # busy for good: the next call opens another
            let_go(con.close)
            raise

    def query(self, name: str, **params) -> pl.DataFrame:
        return queries.run(self.con, name, params).pl()

    @staticmethod
    def queries() -> list[queries.Query]:
        return queries.all_queries()

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def frame(con: duckdb.DuckDBPyConnection, sql: str, params: dict | list | None = None) -> pl.DataFrame:
    """Run one statement and return its result as a Polars frame (through Arrow, no copies)."""
    rel = con.sql(sql, params=params or None)
    return rel.pl() if rel is not None else pl.DataFrame()
