"""Opening a warehouse: a DuckDB file whose schema is brought up to date on open.

Migrations (`migrations/NNNN_*.sql`) are append-only and recorded in `_migrations`, so an older
warehouse file is upgraded in place. Views (`views/*.sql`) hold the metric definitions and are
re-created on every writable open, so a changed definition reaches old files too.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import duckdb

HERE = Path(__file__).parent
MIGRATIONS = HERE / "migrations"
VIEWS = HERE / "views"
DEFAULT_DB = "warehouse.duckdb"


class WarehouseError(Exception):
    """A problem the user can fix; the message says how."""


def default_db_path() -> str:
    return os.environ.get("IWH_DB") or DEFAULT_DB


def migration_files() -> list[Path]:
    return sorted(MIGRATIONS.glob("[0-9][0-9][0-9][0-9]_*.sql"))


def view_files() -> list[Path]:
    # Views may depend on views: files are named so that sorted order is dependency order.
    return sorted(VIEWS.glob("*.sql"))


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply pending migrations and refresh views; return the names of migrations applied."""
    con.execute("CREATE TABLE IF NOT EXISTS _migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)")
    done = {r[0] for r in con.execute("SELECT name FROM _migrations").fetchall()}
    applied = []
    for path in migration_files():
        if path.stem in done:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(path.read_text())
            con.execute("INSERT INTO _migrations VALUES (?, now())", [path.stem])
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        applied.append(path.stem)
    for path in view_files():
        con.execute(path.read_text())
    return applied


def connect(path: str | os.PathLike | None = None, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open (and for writers, create and migrate) the warehouse at `path`."""
    path = str(path or default_db_path())
    if read_only:
        if path != ":memory:" and not Path(path).exists():
            raise WarehouseError(
                f"No warehouse at {path}. Create one with `iwh ingest PATH` "
                "or point to an existing one with --db or IWH_DB."
            )
        con = duckdb.connect(path, read_only=True)
        pending = _pending_migrations(con) + _missing_views(con)
        if pending:
            con.close()
            raise WarehouseError(
                f"The warehouse {path} predates this version ({', '.join(pending)} missing); "
                "run any `iwh ingest` on it, or `iwh migrate`, to upgrade it in place."
            )
        return con
    con = duckdb.connect(path)
    migrate(con)
    return con


_DEFINED = re.compile(r"CREATE OR REPLACE (?:VIEW|MACRO) (\w+)", re.IGNORECASE)


def _missing_views(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Views and macros the view files define that the file lacks (they are made on writable opens)."""
    have = {r[0] for r in con.execute(
        "SELECT view_name FROM duckdb_views() UNION SELECT function_name FROM duckdb_functions() "
        "WHERE function_type IN ('macro', 'table_macro')").fetchall()}
    return [name for path in view_files() for name in _DEFINED.findall(path.read_text()) if name not in have]


def _pending_migrations(con: duckdb.DuckDBPyConnection) -> list[str]:
    try:
        done = {r[0] for r in con.execute("SELECT name FROM _migrations").fetchall()}
    except duckdb.CatalogException:
        done = set()
    return [p.stem for p in migration_files() if p.stem not in done]
