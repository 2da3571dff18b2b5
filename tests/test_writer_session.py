"""A file's writer keeps the file open between its sessions while no one waits for it (a checkpoint
per session rewrote what each touched: half the write time of a trace ingest), and lets it go as
soon as someone does. Every connection is quiet: DuckDB's progress bar once reached stdout in the
middle of `--format json` (found by tests/fuzz.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb

from inductor_warehouse.store import file, protocol
from inductor_warehouse.store.opening import connect
from inductor_warehouse.store.writer import Writer
from tests.conftest import IWH, held_by_another_process

ROOT = Path(__file__).resolve().parent.parent


def _insert(writer: Writer, text: str) -> None:
    with writer.session() as con:
        con.execute("INSERT INTO _migrations VALUES (?, now())", [text])


_SETTINGS_SEEN = """
import json, sys
from inductor_warehouse.store.opening import connect
from inductor_warehouse.store.writer import Writer
db, out = sys.argv[1], sys.argv[2]
seen = {"default": __import__("duckdb").connect().execute("SELECT current_setting('enable_progress_bar')").fetchone()[0]}
with Writer(db) as w, w.session() as con:
    seen["writer"] = con.execute("SELECT current_setting('enable_progress_bar')").fetchone()[0]
for name, kwargs in (("reader", {"read_only": True}), ("locked", {"read_only": True, "lockdown": True}),
                     ("plain", {})):
    con = connect(db, **kwargs)
    seen[name] = con.execute("SELECT current_setting('enable_progress_bar')").fetchone()[0]
    con.close()
open(out, "w").write(json.dumps(seen))
"""


def test_no_connection_prints_a_progress_bar(tmp_path):
    """On a terminal DuckDB turns its progress bar on by default: the child runs on a pseudo-terminal."""
    import json
    import pty

    db, out = str(tmp_path / "wh.duckdb"), tmp_path / "seen.json"
    primary, secondary = pty.openpty()
    try:
        subprocess.run([sys.executable, "-c", _SETTINGS_SEEN, db, str(out)], cwd=ROOT, stdout=secondary,
                       stderr=secondary, timeout=60, check=True)
    finally:
        os.close(secondary)
        os.close(primary)
    seen = json.loads(out.read_text())
    assert seen.pop("default") is True  # the bar this guards against
    assert seen == {"writer": False, "reader": False, "locked": False, "plain": False}


def test_an_idle_writer_keeps_its_file_until_someone_waits(tmp_path):
    db = str(tmp_path / "wh.duckdb")
    w = Writer(db)
    try:
        _insert(w, "first")
        _insert(w, "second")
        # held between sessions: nothing checkpointed yet, the commits are in the WAL
        assert w._file.con is not None and Path(db + ".wal").exists() and Path(db + ".wal").stat().st_size > 0
        # a reader in another process asks for the file: the writer's watcher lets it go
        t0 = time.monotonic()
        out = subprocess.run(
            [sys.executable, "-c", "import sys; from inductor_warehouse.store.opening import connect; "
             "c = connect(sys.argv[1], read_only=True, wait=20); "
             "print(c.execute(\"SELECT count(*) FROM _migrations WHERE name IN ('first', 'second')\").fetchone()[0])", db],
            capture_output=True, text=True, cwd=ROOT, timeout=60)
        waited = time.monotonic() - t0
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "2"
        assert w._file.con is None  # released, and checkpointed on the way
        # the reader did not wait for a timeout: the release took a poll or two (plus Python's start)
        assert waited < 10, waited
        # the next session opens it again
        _insert(w, "third")
        assert w._file.con is not None
    finally:
        w.close()
    con = duckdb.connect(db, read_only=True)
    assert con.execute("SELECT count(*) FROM _migrations WHERE name IN ('first', 'second', 'third')").fetchone()[0] == 3
    con.close()
    assert not Path(db + ".wal").exists()  # closing the writer checkpointed


def test_a_writer_waiting_for_the_file_gets_it_from_an_idle_one(tmp_path):
    db = str(tmp_path / "wh.duckdb")
    w = Writer(db)
    try:
        _insert(w, "first")
        code = ("import sys; from inductor_warehouse.store.writer import Writer\n"
                "with Writer(sys.argv[1], wait=20) as w, w.session() as con:\n"
                "    con.execute(\"INSERT INTO _migrations VALUES ('other', now())\")\n")
        out = subprocess.run([sys.executable, "-c", code, db], capture_output=True, text=True, cwd=ROOT, timeout=60)
        assert out.returncode == 0, out.stderr
        _insert(w, "after")
    finally:
        w.close()
    con = duckdb.connect(db, read_only=True)
    names = [r[0] for r in con.execute("SELECT name FROM _migrations WHERE name IN ('first', 'other', 'after') "
                                       "ORDER BY applied_at").fetchall()]
    con.close()
    assert names == ["first", "other", "after"]


def test_a_writer_killed_while_it_holds_the_file_loses_no_commit(tmp_path):
    db = str(tmp_path / "wh.duckdb")
    code = ("import sys, time; from inductor_warehouse.store.writer import Writer\n"
            "w = Writer(sys.argv[1])\n"
            "for name in ('a', 'b'):\n"
            "    with w.session() as con:\n"
            "        con.execute('INSERT INTO _migrations VALUES (?, now())', [name])\n"
            "print('committed', flush=True)\n"
            "time.sleep(600)\n")
    p = subprocess.Popen([sys.executable, "-c", code, db], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert p.stdout.readline().strip() == "committed"
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    con = connect(db, read_only=True, wait=5)
    try:
        assert con.execute("SELECT count(*) FROM _migrations WHERE name IN ('a', 'b')").fetchone()[0] == 2
    finally:
        con.close()


# -- a dashboard keeps the file open between its reads, until someone waits for it -------------

def _kept_read(db: str) -> int:
    con = connect(db, read_only=True, lockdown=True, keep_open=True)
    try:
        return con.execute("SELECT count(*) FROM _migrations WHERE name LIKE 'row %'").fetchone()[0]
    finally:
        con.close()


def test_a_kept_reader_holds_the_file_until_a_writer_waits(tmp_path, monkeypatch):
    monkeypatch.setattr(protocol, "KEEP_S", 300.0)  # so only the writer's waiting can end it here
    db = str(tmp_path / "wh.duckdb")
    with Writer(db) as w:
        _insert(w, "row 1")
    assert _kept_read(db) == 1
    # its connection is closed, yet the file stays open in this process: another's writer is refused
    assert held_by_another_process(db)
    t0 = time.monotonic()
    code = ("import sys; from inductor_warehouse.store.writer import Writer\n"
            "with Writer(sys.argv[1], wait=60) as w, w.session() as con:\n"
            "    con.execute(\"INSERT INTO _migrations VALUES ('row 2', now())\")\n")
    out = subprocess.run([sys.executable, "-c", code, db], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert time.monotonic() - t0 < 30  # let go on the writer's waiting, not after KEEP_S
    assert db not in protocol.Kept._all
    assert _kept_read(db) == 2  # the next read opens it again and sees the commit


def test_a_kept_reader_lets_go_when_idle(tmp_path, monkeypatch):
    monkeypatch.setattr(protocol, "KEEP_S", 0.3)
    db = str(tmp_path / "wh.duckdb")
    with Writer(db) as w:
        _insert(w, "row 1")
    assert _kept_read(db) == 1 and db in protocol.Kept._all
    deadline = time.monotonic() + 10
    while db in protocol.Kept._all and time.monotonic() < deadline:
        time.sleep(0.05)
    assert db not in protocol.Kept._all
    assert not held_by_another_process(db)


def test_this_process_may_open_a_kept_file_with_other_settings(tmp_path, monkeypatch):
    """DuckDB refuses a second open of a file with other settings in one process: the kept reader
    steps aside for this process's own writer or plain reader."""
    monkeypatch.setattr(protocol, "KEEP_S", 300.0)
    db = str(tmp_path / "wh.duckdb")
    with Writer(db) as w:
        _insert(w, "row 1")
    assert _kept_read(db) == 1
    with Writer(db) as w:
        _insert(w, "row 2")
    con = connect(db, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM _migrations WHERE name LIKE 'row %'").fetchone()[0] == 2
    finally:
        con.close()


def _format_and_guard_text_compression(db: Path) -> tuple[str, set[str]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        version = con.execute("SELECT tags['storage_version'] FROM duckdb_databases() WHERE NOT internal").fetchone()[0]
        kinds = {r[0] for r in con.execute("SELECT compression FROM pragma_storage_info('guard_trees') "
                                          "WHERE column_name = 'text' AND compression <> 'Constant'").fetchall()}
        return version, kinds
    finally:
        con.close()


def test_a_new_file_is_written_in_the_compressed_format_and_an_older_one_keeps_its_own(tmp_path):
    """A new warehouse file is made in STORAGE_VERSION, whose compressions DuckDB's default format
    leaves out: the GPU runs' guard trees (40 KB of text) are ZSTD there and raw in the other. A
    file made before keeps its format, takes the same rows, and `iwh migrate` says how to move it."""
    runs = ROOT / "tests" / "fixtures" / "runs" / "gpu-torch2.11"
    new, old = tmp_path / "new.duckdb", tmp_path / "old.duckdb"
    duckdb.connect(str(old)).close()  # a file in DuckDB's default format, as main made them
    for db in (new, old):
        subprocess.run(IWH + ["--db", str(db), "ingest", str(runs)], cwd=ROOT, check=True, capture_output=True)
    assert file.STORAGE_VERSION == "v1.4.0"
    assert _format_and_guard_text_compression(new) == ("v1.4.0+", {"ZSTD"})
    assert _format_and_guard_text_compression(old) == ("v1.0.0+", {"Uncompressed"})
    counts = []
    for db in (new, old):
        con = connect(db, read_only=True)
        counts.append(con.execute("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM guard_trees), "
                                  "(SELECT sum(strlen(text)) FROM guard_trees)").fetchone())
        con.close()
    assert counts[0] == counts[1]
    assert counts[0][0] == 2 and counts[0][2] > 40_000
    said = {db: subprocess.run(IWH + ["--db", str(db), "migrate"], cwd=ROOT, check=True, capture_output=True,
                               text=True).stdout for db in (new, old)}
    assert "format" not in said[new]
    assert "stored in DuckDB's v1.0.0+ format" in said[old] and f"--db {old} copy NEW.duckdb" in said[old]


def test_a_process_that_made_a_warehouse_may_ingest_into_it_while_holding_it(tmp_path):
    """The compact format is given to a connection of its own that makes the empty file: given to
    the first writer, it made that writer's settings differ from the next one's, and DuckDB refused
    the ingest of a process that still held the file it had just made."""
    from inductor_warehouse.ingest.load import ingest_paths

    db = tmp_path / "wh.duckdb"
    con = connect(db)
    try:
        summary = ingest_paths([ROOT / "tests" / "fixtures" / "runs" / "gpu-torch2.11"], str(db))
        assert summary.runs == 2
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 2
        assert con.execute("SELECT tags['storage_version'] FROM duckdb_databases() "
                           "WHERE database_name = current_database()").fetchone()[0] == "v1.4.0+"
    finally:
        con.close()


def test_wait_0_means_do_not_wait_for_a_writer(tmp_path):
    """`--wait 0` fails at once while another writer holds the file (0 is a value, not the default)."""
    db = str(tmp_path / "wh.duckdb")
    Writer(db).close()
    code = ("import sys, time; from inductor_warehouse.store.writer import Writer\n"
            "with Writer(sys.argv[1]) as w, w.session():\n"
            "    print('holding', flush=True)\n"
            "    time.sleep(600)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, db], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout.readline().strip() == "holding"
        t0 = time.monotonic()
        done = subprocess.run([*IWH, "ingest", str(tmp_path), "--db", db, "--wait", "0"],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)
        took = time.monotonic() - t0
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert done.returncode != 0 and "another writer held" in done.stderr, done.stderr
    assert took < 30, took
