"""A canned query's rows as dicts, for the analyses that walk them in Python."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias, cast

from inductor_warehouse.schema import queries as canned

if TYPE_CHECKING:
    import duckdb

    from inductor_warehouse.store.api import Warehouse

# a canned query's row: column -> its value as DuckDB returns it, of the column's SQL type (text,
# numbers, lists, NULL): any value; the analyses add keys of their own to the rows of runs
Row: TypeAlias = dict[str, Any]
# what the analyses read: a DuckDB connection (the dashboard's pooled one too) or a Warehouse
Reader: TypeAlias = "duckdb.DuckDBPyConnection | Warehouse"


def connection(con: Reader) -> duckdb.DuckDBPyConnection:
    """The DuckDB connection under a Warehouse, or `con` itself."""
    # a Warehouse has one; anything else is one: a DuckDB connection, or duckdb_engine's wrapper of one (the dashboard's)
    return cast("duckdb.DuckDBPyConnection", getattr(con, "con", con))


def run_query(con: Reader, name: str, **params: Any) -> list[Row]:
    """A canned query as a list of dicts, on a raw connection or a Warehouse."""
    result = canned.run(connection(con), name, params)
    cols = [d[0] for d in result.description]
    return [dict(zip(cols, row, strict=True)) for row in result.fetchall()]
