"""The Python API for notebooks and scripts.

    from schema.api import Warehouse
    wh = Warehouse("warehouse.duckdb")          # or "ducklake:postgres:dbname=iwh host=...", or $IWH_DB
    wh.query("fusion_rate_by_model_version", model="hf_bert")   # a canned query -> polars.DataFrame
    wh.sql("SELECT model, count(*) FROM runs GROUP BY ALL")     # ad hoc, read-only

A Warehouse reads: SQL on it cannot write, ATTACH, read files or change settings. Opened on a
file, it holds a read lock that a writer waits for: close it (or use `with`) when done.
"""

from __future__ import annotations

import duckdb
import polars as pl

from schema import queries
from schema.bounds import bounded, check_read_statement
from schema.location import Location, locate
from schema.warehouse import connect


class Warehouse:
    def __init__(self, location: str | Location | None = None, *, wait: float | None = None):
        self.location = locate(location)
        self.con = connect(self.location, read_only=True, wait=wait, lockdown=True)

    @property
    def path(self) -> str:
        return self.location.shown

    def sql(self, text: str, params: dict | list | None = None, timeout: float | None = 0) -> pl.DataFrame:
        """Ad hoc SQL: one read statement; `timeout` seconds (0: none, None: IWH_QUERY_TIMEOUT)."""
        check_read_statement(self.con, text)
        with bounded(self.con, timeout):
            return frame(self.con, text, params)

    def query(self, name: str, **params) -> pl.DataFrame:
        q = queries.get(name)
        return frame(self.con, q.sql, q.bind(params))

    @staticmethod
    def queries() -> list[queries.Query]:
        return queries.all_queries()

    def close(self) -> None:
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def frame(con: duckdb.DuckDBPyConnection, sql: str, params: dict | list | None = None) -> pl.DataFrame:
    """Run one statement and return its result as a Polars frame (through Arrow, no copies)."""
    rel = con.sql(sql, params=params or None)
    return rel.pl() if rel is not None else pl.DataFrame()
