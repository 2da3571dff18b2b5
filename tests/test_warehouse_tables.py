"""schema.warehouse.TABLES names every table a user sees (the loader writes its FACT_TABLES, export
offers TABLES): it must equal what the migrations create, bookkeeping tables aside."""

from __future__ import annotations

from schema.warehouse import FACT_TABLES, SHARED_TEXTS, TABLES, current_tables


def test_the_table_list_is_the_migrations_tables():
    made = {name for name, _ in current_tables() if not name.startswith("_")}
    assert set(TABLES) == made and len(TABLES) == len(set(TABLES))
    assert set(FACT_TABLES) == made - {"runs", *SHARED_TEXTS}
