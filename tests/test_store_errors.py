"""DuckDB's failures, classified once into the store's exception types (store/errors.py), from real
failures: another process's lock, a file that is no warehouse, a file cut short, a conflict of
settings in one process, and a statement's own error, which is no failure of the warehouse."""

from __future__ import annotations

import os
import subprocess
import sys

import duckdb
import pytest

from inductor_warehouse.store.errors import (SettingsConflict, WarehouseCutShort, WarehouseLocked, WarehouseTransient,
                                             WarehouseUnreadable, classify, is_terminal)
from inductor_warehouse.store.opening import connect


def _error(fn) -> BaseException:
    try:
        fn()
    except BaseException as e:
        return e
    raise AssertionError("no error")


def test_a_lock_held_by_another_process_is_transient(tmp_path):
    path = str(tmp_path / "wh.duckdb")
    duckdb.connect(path).close()
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time\ncon = duckdb.connect(sys.argv[1])\n"
                               "print('held', flush=True)\ntime.sleep(60)", path], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        e = _error(lambda: duckdb.connect(path))
        assert classify(e) is WarehouseLocked and issubclass(WarehouseLocked, WarehouseTransient)
        assert not is_terminal(e)
        # the store waits for it, then says who held it
        said = _error(lambda: connect(path, wait=0.3))
        assert isinstance(said, WarehouseLocked) and f"pid {holder.pid}" in str(said)
    finally:
        holder.kill()
        holder.wait()


def test_a_file_that_is_no_warehouse_is_unreadable(tmp_path):
    path = tmp_path / "notes.duckdb"
    path.write_text("not a database\n" * 1000)
    e = _error(lambda: duckdb.connect(str(path)))
    assert classify(e) is WarehouseUnreadable and is_terminal(e)
    said = _error(lambda: connect(str(path), read_only=True))
    assert isinstance(said, WarehouseUnreadable) and "is not a readable DuckDB warehouse" in str(said)


def test_a_file_cut_short_fails_where_its_blocks_are_missing(tmp_path):
    path = str(tmp_path / "wh.duckdb")
    con = duckdb.connect(path)
    con.execute("CREATE TABLE t AS SELECT range AS i, repeat('x', 100) AS s FROM range(200000)")
    con.close()
    os.truncate(path, os.path.getsize(path) // 2)
    e = _error(lambda: duckdb.connect(path, read_only=True).execute("SELECT sum(length(s)) FROM t").fetchall())
    assert "Could not read" in str(e)  # where the open, or the read after it, meets the missing blocks
    assert classify(e) is WarehouseCutShort and issubclass(WarehouseCutShort, WarehouseUnreadable)


def test_other_settings_in_one_process_conflict(tmp_path):
    path = str(tmp_path / "wh.duckdb")
    first = duckdb.connect(path)
    try:
        e = _error(lambda: duckdb.connect(path, read_only=True))
        assert classify(e) is SettingsConflict and is_terminal(e)
    finally:
        first.close()


@pytest.mark.parametrize("sql", ["INSERT INTO t VALUES (1), (1)", "SELECT 'x'::INTEGER", "SELECT * FROM nowhere"])
def test_a_statements_own_error_is_no_failure_of_the_warehouse(sql):
    con = duckdb.connect()
    con.execute("CREATE TABLE t (i INTEGER PRIMARY KEY)")
    e = _error(lambda: con.execute(sql))
    assert classify(e) is None and not is_terminal(e)
