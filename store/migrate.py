"""Bringing a warehouse to this version's schema (schema/ddl.py reads the files).

Migrations are append-only and recorded in `_migrations`, so an older warehouse is upgraded in place,
each migration in a transaction of its own. A new warehouse starts at the current schema
(`current.sql`) in one transaction, its migrations recorded as applied; later ones apply to it as
written. Views are written again whenever their files changed since the warehouse last got them,
so a changed metric reaches old warehouses too; readers refuse a warehouse that is not current.
A migration leaves a warehouse whole: the rollups it drops are made again here (store/rollups.py),
by whichever writer migrates, before anyone reads them.
"""

from __future__ import annotations

import duckdb

from inductor_warehouse.schema import ddl
from inductor_warehouse.store.connection import one_row, transaction
from inductor_warehouse.store.errors import WarehouseError
from inductor_warehouse.store.location import Location
from inductor_warehouse.store.rollups import fill_missing


def is_lake(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(one_row(con, "SELECT type FROM duckdb_databases() WHERE database_name = current_database()")[0] == "ducklake")


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply pending migrations, refresh views and make again the rollups a migration dropped; return
    the names of migrations applied."""
    lake = is_lake(con)
    have = {r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database()").fetchall()}
    if "runs" not in have and "_migrations" not in have:
        with transaction(con):
            return ddl.create_current(con, lake)
    applied = _apply_migrations(con, lake)
    _create_views(con)
    fill_missing(con)
    return applied


def _apply_migrations(con: duckdb.DuckDBPyConnection, lake: bool) -> list[str]:
    """The migrations `_migrations` does not list, each in a transaction of its own."""
    con.execute(f"CREATE TABLE IF NOT EXISTS _migrations (name VARCHAR{'' if lake else ' PRIMARY KEY'}, applied_at TIMESTAMP)")
    done = {r[0] for r in con.execute("SELECT name FROM _migrations").fetchall()}
    applied = []
    for path in ddl.migration_files():
        if path.stem in done:
            continue
        with transaction(con):
            con.execute(path.read_text())
            con.execute("INSERT INTO _migrations VALUES (?, now())", [path.stem])
        applied.append(path.stem)
    return applied


def _create_views(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)create the views and macros when their files changed since this warehouse last got them
    (their digest is kept in `_views`): no write at all on a writer's open otherwise, and no listing
    of the views and macros, which lists every built-in function to find the macros."""
    con.execute("CREATE TABLE IF NOT EXISTS _views (digest VARCHAR)")
    if _views_digest_current(con):
        return
    with transaction(con):
        ddl.write_views(con, *ddl.view_texts())


def check_current(con: duckdb.DuckDBPyConnection, loc: Location) -> None:
    """A reader's warehouse has every migration and this version's views, or a WarehouseError says
    how to upgrade it. The views' digest answers first: every read opens the warehouse."""
    pending = _pending_migrations(con) + ([] if _views_digest_current(con) else _missing_views(con))
    if pending:
        raise WarehouseError(
            f"The warehouse {loc.printable} predates this version ({', '.join(pending)} missing); "
            "run any `iwh ingest` on it, or `iwh migrate`, to upgrade it in place."
        )


def _views_digest_current(con: duckdb.DuckDBPyConnection) -> bool:
    """The warehouse's views were written from this version's view files (writers keep the digest)."""
    try:
        return bool(one_row(con, "SELECT count(*) FROM _views WHERE digest = ?", [ddl.current_views_digest()])[0])
    except duckdb.CatalogException:
        return False


def _missing_views(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Views and macros the view files define that the warehouse lacks (writers make them)."""
    have = {r[0] for r in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE database_name = current_database() UNION "
        "SELECT function_name FROM duckdb_functions() WHERE function_type IN ('macro', 'table_macro') "
        "AND database_name = current_database()").fetchall()}
    return [name for name in ddl.view_names() if name not in have]


def _pending_migrations(con: duckdb.DuckDBPyConnection) -> list[str]:
    try:
        done = {r[0] for r in con.execute("SELECT name FROM _migrations").fetchall()}
    except duckdb.CatalogException:
        done = set()
    return [p.stem for p in ddl.migration_files() if p.stem not in done]


# ---- current.sql: what every migration leaves ------------------------------------------------------

def migrated_tables() -> list[tuple[str, str]]:
    """(table, CREATE TABLE statement) of what every migration leaves, by table name: what
    current.sql must hold."""
    mem = duckdb.connect()
    try:
        _apply_migrations(mem, lake=False)
        _create_views(mem)
        return mem.execute("SELECT table_name, sql FROM duckdb_tables() ORDER BY table_name").fetchall()
    finally:
        mem.close()


def current_sql() -> str:
    """current.sql's text, made from the migrations: each table a statement, a column a line."""
    head = ("-- The schema a new warehouse is made with: the tables every migration in migrations/ leaves.\n"
            "-- Generated by `make schema`; do not edit (add a migration). tests/test_warehouse_tables.py\n"
            "-- checks that it is current.\n")
    return head + "".join(f"\n{_one_column_a_line(statement)}\n" for _, statement in migrated_tables())


def write_current_sql() -> None:
    ddl.CURRENT.write_text(current_sql())


def _one_column_a_line(statement: str) -> str:
    """`CREATE TABLE t(a X, b Y);` with each column (or constraint) on a line of its own: split at
    the commas outside parentheses and quotes."""
    head, body = statement[: statement.index("(") + 1], statement[statement.index("(") + 1 : statement.rindex(")")]
    parts, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(body):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(body[start:i].strip())
            start = i + 1
    parts.append(body[start:].strip())
    return head + "\n" + ",\n".join(f"    {p}" for p in parts) + "\n);"
