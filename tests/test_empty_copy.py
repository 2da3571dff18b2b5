"""A new warehouse file is a copy of the empty warehouse of this schema, kept in the cache folder
(store/file.py): the same tables, migrations and views as one made afresh, its migrations dated
when it was made, and made afresh where no cache folder can be written."""

from __future__ import annotations

import datetime as dt
import os

import duckdb

from inductor_warehouse.store import file as wh_file
from inductor_warehouse.store.location import locate
from inductor_warehouse.store.opening import connect


def _catalog(path) -> tuple:
    con = duckdb.connect(str(path), read_only=True)
    try:
        tables = con.execute("SELECT table_name, sql FROM duckdb_tables() ORDER BY 1").fetchall()
        views = con.execute("SELECT view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY 1").fetchall()
        migrations = con.execute("SELECT name FROM _migrations ORDER BY name").fetchall()
        digest = con.execute("SELECT digest FROM _views").fetchall()
        storage = con.execute("SELECT tags['storage_version'] FROM duckdb_databases() "
                              "WHERE database_name = current_database()").fetchone()
        return tables, views, migrations, digest, storage
    finally:
        con.close()


def test_a_copy_is_the_warehouse_made_afresh(tmp_path, monkeypatch):
    monkeypatch.setenv("IWH_CACHE_DIR", str(tmp_path / "cache"))
    fresh = tmp_path / "fresh.duckdb"
    wh_file._make_schema(str(fresh))
    start = dt.datetime.now()
    for name in ("first.duckdb", "second.duckdb"):  # the first makes the empty one, the second copies it
        assert wh_file.create_file(locate(str(tmp_path / name))) is True
    kept = list((tmp_path / "cache").iterdir())
    assert len(kept) == 1 and kept[0].name.startswith("empty-")
    assert _catalog(tmp_path / "second.duckdb") == _catalog(fresh)
    # the writer that opens a copy dates its migrations
    con = connect(str(tmp_path / "third.duckdb"))
    try:
        applied = con.execute("SELECT min(applied_at), count(*) FROM _migrations").fetchone()
    finally:
        con.close()
    assert applied[0] >= start.replace(microsecond=0) - dt.timedelta(seconds=1) and applied[1] > 10


def test_another_schema_gets_its_own_empty_warehouse(tmp_path, monkeypatch):
    """The empty warehouse is named by what it depends on: another version's is never copied."""
    monkeypatch.setenv("IWH_CACHE_DIR", str(tmp_path / "cache"))
    wh_file.create_file(locate(str(tmp_path / "a.duckdb")))
    monkeypatch.setattr(wh_file, "STORAGE_VERSION", "v1.2.0")
    wh_file.create_file(locate(str(tmp_path / "b.duckdb")))
    assert len(list((tmp_path / "cache").iterdir())) == 2
    assert _catalog(tmp_path / "b.duckdb")[4][0].startswith("v1.2.0")


def test_no_cache_folder_makes_it_afresh(tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    monkeypatch.setenv("IWH_CACHE_DIR", str(blocked / "cache"))
    assert wh_file.create_file(locate(str(tmp_path / "wh.duckdb"))) is False
    assert os.path.exists(tmp_path / "wh.duckdb")
    assert _catalog(tmp_path / "wh.duckdb")[2]
