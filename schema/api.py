"""The Python API for notebooks and scripts.

    from schema.api import Warehouse
    wh = Warehouse("warehouse.duckdb")
    wh.query("fusion_rate_by_model_version", model="hf_bert")   # a canned query -> polars.DataFrame
    wh.sql("SELECT model, count(*) FROM runs GROUP BY ALL")     # ad hoc, read-only
"""

from __future__ import annotations

import duckdb
import polars as pl

from schema import queries
from schema.warehouse import connect, default_db_path


class Warehouse:
    def __init__(self, path: str | None = None, *, read_only: bool = True):
        self.path = str(path or default_db_path())
        self.con = _open(self.path, read_only)

    def sql(self, text: str, params: dict | list | None = None) -> pl.DataFrame:
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


def _open(path: str, read_only: bool) -> duckdb.DuckDBPyConnection:
    if not read_only:
        return connect(path)
    con = connect(path, read_only=True)
    # ad hoc SQL must not reach the file system: no read_csv('/etc/passwd'), no ATTACH
    con.execute("SET enable_external_access = false")
    return con
