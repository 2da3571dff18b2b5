"""Moving a warehouse: a file into a lake and back, so a team can start local and grow.

The destination is created (or must be empty) and brought to the current schema, views and macros
included, by the same migrations every writer runs; the source must be current too (`iwh migrate`
upgrades it). Every table is then copied in one transaction, so the destination holds the whole
warehouse or nothing, and its `_migrations` equal the source's.
"""

from __future__ import annotations

import duckdb

from inductor_warehouse.schema.ddl import current_tables
from inductor_warehouse.store.connection import one_row, sql_literal, transaction
from inductor_warehouse.store.errors import WarehouseError
from inductor_warehouse.store.extensions import extension_directory
from inductor_warehouse.store.lake import attach_lake, need_lake_extras
from inductor_warehouse.store.location import Location, locate
from inductor_warehouse.store.opening import connect
from inductor_warehouse.store.writer import Writer

SOURCE = "iwh_source"


def copy_warehouse(source: str | Location, dest: str | Location, wait: float | None) -> dict[str, int]:
    """Copy every table of `source` into the empty warehouse `dest`; returns rows copied per table."""
    src, dst = locate(source), locate(dest)
    if src.is_lake == dst.is_lake and (src.text == dst.text if src.is_lake else src.path == dst.path):
        raise WarehouseError("the source and the destination are the same warehouse")
    connect(src, read_only=True, wait=wait).close()  # exists and is current, or says what to do
    # the migrations and the views' digest are the destination's own, written when it was made
    tables = [name for name, _ in current_tables() if name not in ("_migrations", "_views")]
    with Writer(dst, wait=wait) as writer, writer.session() as con:
        runs = one_row(con, "SELECT count(*) FROM runs")[0]
        if runs:
            raise WarehouseError(f"{dst.printable} already holds {runs} runs: copy into a new, empty warehouse")
        _attach_source(con, src)
        try:
            copied: dict[str, int] = {}
            with transaction(con):
                for table in tables:
                    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {SOURCE}.{table}")
                    copied[table] = one_row(con, f"SELECT count(*) FROM {SOURCE}.{table}")[0]
        finally:
            con.execute(f"DETACH {SOURCE}")
    return copied


def _attach_source(con: duckdb.DuckDBPyConnection, src: Location) -> None:
    if not src.is_lake:
        con.execute(f"ATTACH {sql_literal(src.path)} AS {SOURCE} (READ_ONLY)")
        return
    need_lake_extras(src)
    con.execute(f"SET extension_directory = {sql_literal(extension_directory())}")
    attach_lake(con, src, SOURCE, read_only=True)
