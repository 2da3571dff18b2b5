"""Disk and file faults: a full file system stops an ingest with a clear message and leaves every
earlier run readable; a truncated or garbage warehouse file gives one line naming the file and what
to do, never a traceback."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import uuid

import pytest

from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import IWH, FIXTURES, ROOT



def iwh(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*IWH, *args], capture_output=True, text=True, cwd=ROOT, timeout=300)


@pytest.fixture
def small_disk(tmp_path):
    """A 6 MB tmpfs: room for one run's warehouse, not for the rest of the fixtures."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6M", "tmpfs", str(mount)], capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_stops_the_ingest_clearly_and_keeps_earlier_runs(small_disk):
    db = str(small_disk / "wh.duckdb")
    assert ingest_paths([FIXTURES / "runs" / "cpu-torch2.13"], db).runs == 1
    before = iwh("runs", "--db", db, "--format", "csv")
    res = iwh("ingest", str(FIXTURES / "runs"), str(FIXTURES / "torch_trace"), "--db", db)
    assert res.returncode == 1
    assert "Traceback" not in res.stderr
    assert "the disk holding it is full" in res.stderr and "every run written before is intact" in res.stderr
    after = iwh("runs", "--db", db, "--format", "csv")
    assert after.returncode == 0, after.stderr
    # what was there is there, readable; the failed batch left nothing half-written
    assert before.stdout.splitlines()[1] in after.stdout.splitlines()
    check = iwh("sql", "SELECT count(*) AS orphans FROM kernels WHERE run_id NOT IN (SELECT run_id FROM runs)",
                "--db", db, "--format", "csv")
    assert check.stdout.split() == ["orphans", "0"]


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "not a warehouse"])
def test_a_damaged_warehouse_file_gives_one_line(tmp_path, damage):
    db = tmp_path / "wh.duckdb"
    ingest_paths([FIXTURES / "runs" / "cpu-torch2.13"], str(db))
    data = db.read_bytes()
    if damage == "truncated":
        db.write_bytes(data[: len(data) // 3])
    elif damage == "garbage":
        db.write_bytes(random.Random(7).randbytes(len(data)))
    elif damage == "empty":
        db.write_bytes(b"")
    else:
        db.write_text(f"# a note someone saved under the warehouse's name {uuid.uuid4()}\n")
    for args in (["runs"], ["sql", "SELECT 1"], ["ingest", str(FIXTURES / "runs" / "cpu-torch2.14.1")],
                 ["query", "overview/runs"], ["compare", "--base", "compiler=2.13", "--head", "compiler=2.14"]):
        res = iwh(*args, "--db", str(db))
        assert res.returncode != 0, (damage, args)
        lines = res.stderr.strip().splitlines()
        assert "Traceback" not in res.stderr and len(lines) == 1, (damage, args, res.stderr)
        assert str(db) in lines[0] and "restore it from a copy" in lines[0], (damage, args, lines)


def test_a_new_warehouse_appears_whole_and_what_a_killed_maker_left_goes(tmp_path, monkeypatch):
    """A new file warehouse is made beside its name and linked in whole: a maker that fails midway
    leaves no file under the name (readers found an empty one, "older than this version"), and the
    next maker removes what dead makers left beside it."""
    import duckdb

    import inductor_warehouse.store.file as wh
    from inductor_warehouse.store.location import locate
    from inductor_warehouse.store.opening import connect

    db = tmp_path / "wh.duckdb"
    dead, living = subprocess.Popen(["true"]), subprocess.Popen(["sleep", "60"])
    dead.wait()
    abandoned = [tmp_path / f"wh.duckdb.iwh-new-{dead.pid}", tmp_path / f"wh.duckdb.iwh-new-{dead.pid}.wal"]
    for path in abandoned:
        path.write_bytes(b"half made")
    alive = tmp_path / f"wh.duckdb.iwh-new-{living.pid}"  # a maker still at work
    alive.write_bytes(b"someone else's")

    def fail(con):
        con.execute("CREATE TABLE runs (run_id VARCHAR)")  # some of the schema, then the maker dies
        raise duckdb.IOException("killed")

    monkeypatch.setenv("IWH_CACHE_DIR", str(tmp_path / "cache"))  # no empty warehouse made before to copy

    try:
        monkeypatch.setattr(wh, "migrate", fail)
        with pytest.raises(wh.WarehouseError, match="cannot create a warehouse at .*wh.duckdb: killed"):
            wh.create_file(locate(str(db)))
        assert not db.exists() and not any(p.exists() for p in abandoned)
        assert [p.name for p in tmp_path.iterdir() if ".iwh-new-" in p.name] == [alive.name]  # its own went too
        monkeypatch.undo()
        ingest_paths([FIXTURES / "runs" / "cpu-torch2.13"], str(db))
        con = connect(str(db), read_only=True)
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (1,)
        con.close()
        assert [p.name for p in tmp_path.iterdir() if ".iwh-new-" in p.name] == [alive.name]
    finally:
        living.kill()


@pytest.mark.parametrize("failure", ["schema file missing", "folder missing", "interrupted", "any error"])
def test_a_failed_create_leaves_no_file(tmp_path, monkeypatch, request, failure):
    """However making a new warehouse fails, nothing is left under its name or beside it: a wheel
    that lacked schema/current.sql left a 12 KB file that every later command called damaged."""
    import inductor_warehouse.store.file as wh
    from inductor_warehouse.schema import ddl

    db = tmp_path / ("no-such-folder" if failure == "folder missing" else ".") / "wh.duckdb"
    monkeypatch.setenv("IWH_CACHE_DIR", str(tmp_path / "cache"))  # no empty warehouse made before to copy
    if failure == "schema file missing":
        monkeypatch.setattr(ddl, "CURRENT", tmp_path / "not-installed" / "current.sql")
        ddl._current_ddl.cache_clear()  # (read once a process; again after the test, from the real file)
        request.addfinalizer(ddl._current_ddl.cache_clear)
    elif failure in ("interrupted", "any error"):
        def fail(con):
            con.execute("CREATE TABLE runs (run_id VARCHAR)")
            raise KeyboardInterrupt if failure == "interrupted" else KeyError("a bug")
        monkeypatch.setattr(wh, "migrate", fail)
    expected = (KeyboardInterrupt if failure == "interrupted" else KeyError if failure == "any error"
                else wh.WarehouseError)
    with pytest.raises(expected) as raised:
        ingest_paths([FIXTURES / "runs" / "cpu-torch2.13"], str(db))
    if expected is wh.WarehouseError:
        assert f"cannot create a warehouse at {db.resolve() if db.parent.exists() else db}" in str(raised.value)
    assert not db.exists() and not db.with_name("wh.duckdb.wal").exists()
    # (the writer's lock files stay, as after any write: they are locks, not warehouse files)
    assert [p.name for p in tmp_path.rglob("*") if p.name.startswith("wh.duckdb")
            and not p.name.endswith((".iwh-writer", ".iwh-waiting"))] == []


def test_an_interrupted_record_of_a_failed_parse_goes_on_as_itself(tmp_path, monkeypatch):
    """A run whose parse failed comes as a `Failed`, which has no spill folder: when recording its
    failure is interrupted, the interrupt goes on as itself (the clean-up took it for a parsed run
    and raised AttributeError in its place)."""
    from inductor_warehouse.ingest import executors, load, write

    def failed(*args, **kwargs):
        yield executors.Failed("s3://bucket/run", RuntimeError("cannot fetch"))

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(load, "parse_all", failed)
    monkeypatch.setattr(write, "fail", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ingest_paths([FIXTURES / "runs" / "cpu-torch2.13"], str(tmp_path / "wh.duckdb"))
