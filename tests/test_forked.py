"""The local parse workers (ingest/forked.py): every item ends once, with its result or its
exception; a worker that dies fails its item alone; nothing outlives the call."""

from __future__ import annotations

import multiprocessing
import os
import signal
import tempfile

import pytest

from inductor_warehouse.ingest import forked, load
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader


def _square(x: int) -> tuple[int, int]:
    if x == 3:
        raise ValueError("three is refused")
    if x == 5:
        os.kill(os.getpid(), signal.SIGKILL)
    return x * x, os.getpid()


def _ended(items, jobs=2):
    out = {}
    for item, result, error in forked.imap_unordered(_square, items, jobs=jobs):
        assert item not in out
        out[item] = (result, error)
    return out


def test_every_item_ends_once_with_its_result_or_its_exception():
    out = _ended(list(range(10)))
    assert sorted(out) == list(range(10))
    assert {i: r[0] for i, (r, e) in out.items() if e is None} == {i: i * i for i in range(10) if i not in (3, 5)}
    assert len({r[1] for r, e in out.values() if e is None}) >= 2, "two workers, and one in place of the killed one"

    refused = out[3][1]
    assert isinstance(refused, ValueError) and str(refused) == "three is refused"
    # the worker's traceback comes with it, as the exception's cause
    assert "_square" in str(refused.__cause__) and "raise ValueError" in str(refused.__cause__)

    died = out[5][1]
    assert isinstance(died, forked.WorkerDied) and "killed by SIGKILL" in str(died)


def test_more_workers_than_items_and_no_items():
    assert {i: r[0] for i, (r, e) in _ended([0, 1], jobs=4).items()} == {0: 0, 1: 1}
    assert _ended([]) == {}


def test_a_caller_that_stops_early_leaves_no_worker_and_no_file(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    results = forked.imap_unordered(_square, list(range(50)), jobs=2)
    next(results)
    assert len(multiprocessing.active_children()) == 2
    assert len(list(tmp_path.glob("iwh-parse-*"))) == 1
    results.close()
    assert multiprocessing.active_children() == []
    assert list(tmp_path.iterdir()) == []


def test_a_parse_worker_killed_fails_its_run_alone_and_the_next_ingest_takes_it(tmp_path, monkeypatch):
    runs = [FIXTURES / "runs" / "cpu-torch2.6.0" / "mlp", FIXTURES / "runs" / "cpu-torch2.14.1" / "mlp",
            FIXTURES / "runs" / "cpu-torch2.13" / "transformer"]
    victim = str(runs[1])
    real = load._parse_one

    def killed_on_the_victim(args):
        if args[0].source_path == victim:  # as the OOM killer would, mid-parse
            os.kill(os.getpid(), signal.SIGKILL)
        return real(args)

    db = str(tmp_path / "wh.duckdb")
    monkeypatch.setattr(load, "_parse_one", killed_on_the_victim)  # the forked workers inherit it
    summary = ingest_paths(runs, db, jobs=2)
    assert (summary.runs, summary.failed, summary.errors) == (2, 1, 1)
    [row] = summary.error_rows
    assert (row["run_id"], row["kind"], row["severity"], row["path"]) == (None, "parse", "error", victim)
    assert "WorkerDied" in row["message"] and "killed by SIGKILL" in row["message"]

    con = reader(db)
    try:
        assert sorted(r[0] for r in con.execute("SELECT source_path FROM runs").fetchall()) == \
            sorted(str(r) for r in runs if str(r) != victim)
    finally:
        con.close()

    monkeypatch.setattr(load, "_parse_one", real)
    again = ingest_paths(runs, db, jobs=2)
    assert (again.runs, again.skipped_runs, again.failed) == (1, 2, 0)
    con = reader(db)
    try:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 3
        assert con.execute("SELECT count(*) FROM ingest_errors WHERE kind = 'parse'").fetchone()[0] == 0
    finally:
        con.close()


def test_a_parsers_exception_still_stops_the_ingest(tmp_path, monkeypatch):
    """A bug is not weather: it stops the ingest, with the worker's traceback."""
    runs = [FIXTURES / "runs" / "cpu-torch2.6.0" / "mlp", FIXTURES / "runs" / "cpu-torch2.14.1" / "mlp"]

    def bug(args):
        raise KeyError("a parser's bug")

    monkeypatch.setattr(load, "_parse_one", bug)
    with pytest.raises(KeyError) as e:
        ingest_paths(runs, str(tmp_path / "wh.duckdb"), jobs=2)
    assert "in bug" in str(e.value.__cause__)


def _slow(x: int) -> int:
    import time

    time.sleep(60)
    return x


_DRIVER = """
import os, sys
from inductor_warehouse.ingest import forked
from tests.test_forked import _slow
results = forked.imap_unordered(_slow, list(range(8)), jobs=2)
import threading, multiprocessing, time
def say():
    while len(multiprocessing.active_children()) < 2:
        time.sleep(0.02)
    print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
threading.Thread(target=say, daemon=True).start()
next(results)
"""


def test_the_workers_die_with_their_caller_whatever_kills_it():
    """A caller killed with SIGKILL (no finally, no atexit) takes its workers with it: forked, they
    hold its descriptors, a warehouse's lock among them."""
    import subprocess
    import sys
    import time

    from tests.conftest import ROOT
    from tests.conftest import alive

    caller = subprocess.Popen([sys.executable, "-c", _DRIVER], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(p) for p in caller.stdout.readline().split()]
        assert len(workers) == 2 and all(alive(w) for w in workers)
        os.kill(caller.pid, signal.SIGKILL)
        caller.wait()
        deadline = time.monotonic() + 3
        while any(alive(w) for w in workers):
            assert time.monotonic() < deadline, "a worker outlived its caller"
            time.sleep(0.02)
    finally:
        caller.kill()
        caller.wait()
