"""schema.warehouse.TABLES names every table a user sees (the loader writes its FACT_TABLES, export
offers TABLES): it must equal what the migrations create, bookkeeping tables aside."""

from __future__ import annotations

import duckdb

from schema.warehouse import (_DEFINED, CURRENT, FACT_TABLES, SHARED_TEXTS, TABLES, connect, current_sql, current_tables,
                              migrate, migrated_tables, migration_files, view_files)


def test_the_table_list_is_the_migrations_tables():
    made = {name for name, _ in current_tables() if not name.startswith("_")}
    assert set(TABLES) == made and len(TABLES) == len(set(TABLES))
    assert set(FACT_TABLES) == made - {"runs", *SHARED_TEXTS}


def test_current_sql_is_what_the_migrations_make():
    assert CURRENT.read_text() == current_sql(), "schema/current.sql is out of date: run `make schema`"


_TABLES = "SELECT table_name, sql FROM duckdb_tables() ORDER BY table_name"
# each view's columns and their types (its SQL as DuckDB prints it varies: `AS DOUBLE`, `AS "DOUBLE"`)
_VIEW_COLUMNS = ("SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE table_name IN "
                 "(SELECT view_name FROM duckdb_views() WHERE NOT internal) ORDER BY table_name, column_index")
_MACROS = ("SELECT function_name, function_type FROM duckdb_functions() "
           "WHERE function_type IN ('macro', 'table_macro') AND NOT internal ORDER BY 1")


def test_a_new_warehouse_has_what_every_migration_makes(tmp_path):
    """A new file is made from current.sql in one transaction, an old one migration by migration:
    both end with the same tables, views, macros and migrations recorded."""
    con = connect(str(tmp_path / "new.duckdb"))
    try:
        tables, views, macros = (con.execute(q).fetchall() for q in (_TABLES, _VIEW_COLUMNS, _MACROS))
        recorded = [r[0] for r in con.execute("SELECT name FROM _migrations ORDER BY name").fetchall()]
    finally:
        con.close()
    assert tables == migrated_tables()
    assert recorded == [p.stem for p in migration_files()]
    old = duckdb.connect(str(tmp_path / "old.duckdb"))
    try:
        old.execute("CREATE TABLE _migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)")
        old.execute(migration_files()[0].read_text())  # a warehouse of the first version ...
        old.execute("INSERT INTO _migrations VALUES (?, now())", [migration_files()[0].stem])
        assert migrate(old) == [p.stem for p in migration_files()[1:]]  # ... upgraded in place
        assert [old.execute(q).fetchall() for q in (_TABLES, _VIEW_COLUMNS, _MACROS)] == [tables, views, macros]
    finally:
        old.close()
    defined = {name for path in view_files() for name in _DEFINED.findall(path.read_text())}
    assert {v[0] for v in views} | {name for name, _ in macros} == defined and len(defined) == 16
