"""The write lock belongs to the warehouse, not to how its location is spelled, and never outlives
its writer. Two spellings and roles of one lake (a real PostgreSQL 15 catalog started by the tests)
ingesting the same runs at once land each run once; `kill -9` of an `iwh ingest --jobs 2` at
several moments leaves no parse worker behind, and the next writer lands its runs at once. Among the
runs, a 2-rank DDP job (torchrun: both ranks' logs and debug folders in one folder) lands as its two
ranks, once each.

Expected values come from a serial ingest of the same runs into a plain file."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pytest

from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.ingest.ray_local import descendants
from inductor_warehouse.store.api import Warehouse
from inductor_warehouse.store.location import locate
from inductor_warehouse.store.lake import LAKE_ID_KEY
from inductor_warehouse.store.opening import connect
from inductor_warehouse.store.protocol import advisory_key
from inductor_warehouse.store.waits import intent_file
from tests.conftest import FIXTURES, GPU_TRAIN_RUN, IWH, alive, children, unpack_cpu_corpora, wait_until
from tests.test_team_warehouse import counts, machine


@pytest.fixture(scope="module")
def corpora(tmp_path_factory) -> list[Path]:
    return unpack_cpu_corpora(tmp_path_factory.mktemp("corpora"))


@pytest.fixture(scope="module")
def ddp(tmp_path_factory) -> Path:
    """The CPU 2-rank gloo DDP job of tests/fixtures/captures (torch 2.13)."""
    root = tmp_path_factory.mktemp("ddp")
    with tarfile.open(FIXTURES / "captures" / "cpu-torch2.13-2.14.1-modes.tar.xz") as tf:
        tf.extractall(root, filter="data", members=[m for m in tf.getmembers() if m.name.startswith("cpu-2.13/ddp")])
    return root / "cpu-2.13" / "ddp"


@pytest.fixture(scope="module")
def serial(corpora, ddp, tmp_path_factory) -> dict[str, int]:
    db = str(tmp_path_factory.mktemp("serial") / "serial.duckdb")
    ingest_paths([*corpora, GPU_TRAIN_RUN, ddp], db)
    return counts(db)


def ranks(location, job: Path) -> list[int]:
    with Warehouse(location) as wh:
        return wh.sql("SELECT rank FROM runs WHERE job = $job ORDER BY rank", {"job": str(job)})["rank"].to_list()


def team_lake(postgres, name: str) -> tuple[str, str]:
    """A lake's database owned by the role `iwh` (docs/team.md), and two locations of it:
    the owner's, and the CI role's (a member of `iwh` that writes as it), spelled as a URI with
    another host name."""
    postgres.role("iwh")
    postgres.role("iwh_ci", "iwh")
    postgres.sql("postgres", "ALTER ROLE iwh_ci SET role = 'iwh'")
    postgres.createdb(name, owner="iwh")
    owner = f"ducklake:postgres:dbname={name} host=127.0.0.1 port={postgres.port} user=iwh"
    ci = f"ducklake:postgres:postgresql://iwh_ci@localhost:{postgres.port}/{name}?application_name=ci"
    return owner, ci


def test_two_spellings_and_roles_of_one_lake_land_each_run_once(postgres, corpora, ddp, serial, tmp_path):
    owner, ci = team_lake(postgres, "spellings")
    ingest_paths([GPU_TRAIN_RUN], locate(owner, str(tmp_path / "lake-data")))
    runs = [str(p) for p in (*corpora, GPU_TRAIN_RUN, ddp)]
    procs = [subprocess.Popen([*IWH, "ingest", *runs, "--db", where, "--jobs", "2"], env=machine(tmp_path, str(i)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i, where in enumerate((owner, ci))]
    results = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in results]
    assert counts(owner) == serial and serial["runs"] == 18 and serial["collectives"] > 0
    assert ranks(ci, ddp) == [0, 1]
    with Warehouse(ci) as wh:
        assert wh.sql("SELECT run_id FROM runs GROUP BY run_id HAVING count(*) > 1").height == 0
        assert wh.sql("SELECT source_hash FROM kernel_sources GROUP BY 1 HAVING count(*) > 1").height == 0
    # one id, in the catalog, whichever way it is reached
    con = connect(owner, read_only=True)
    try:
        ids = con.execute("SELECT value FROM ducklake_options('wh') WHERE option_name = ?", [LAKE_ID_KEY]).fetchall()
    finally:
        con.close()
    assert len(ids) == 1 and len(ids[0][0]) == 32


def test_two_spellings_make_one_new_lake(postgres, corpora, tmp_path):
    """Two writers of a lake not made yet: one makes it (and gives it its id), the other writes into it."""
    owner, ci = team_lake(postgres, "made_twice")
    data = ["--data-path", str(tmp_path / "lake-data")]
    procs = [subprocess.Popen([*IWH, "ingest", str(run), "--db", where, *data], env=machine(tmp_path, str(i)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i, (where, run) in enumerate(((owner, corpora[0]), (ci, corpora[1])))]
    results = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in results]
    assert counts(ci)["runs"] == 10


def test_a_lake_made_before_ids_gets_one_on_its_first_write(postgres, tmp_path):
    owner, ci = team_lake(postgres, "before_ids")
    ingest_paths([GPU_TRAIN_RUN], locate(owner, str(tmp_path / "lake-data")))
    postgres.sql("before_ids", f"DELETE FROM ducklake_metadata WHERE key = '{LAKE_ID_KEY}'")
    from inductor_warehouse.store.writer import Writer

    with Writer(ci) as writer, writer.session() as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
        key = writer._lock.key
    import psycopg

    with psycopg.connect(postgres.conninfo("before_ids")) as pg:
        (lake_id,) = pg.execute("SELECT value FROM ducklake_metadata WHERE key = %s", [LAKE_ID_KEY]).fetchone()
    assert key == advisory_key(lake_id)


def test_every_spelling_of_a_file_names_one_warehouse(tmp_path, monkeypatch):
    real = tmp_path / "data"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    monkeypatch.chdir(tmp_path)
    spellings = [str(real / "wh.duckdb"), "link/wh.duckdb", "./data/../link/wh.duckdb"]
    assert len({locate(s).path for s in spellings}) == 1
    assert len({intent_file(locate(s)) for s in spellings}) == 1


# ---- no lock outlives its writer ----------------------------------------------------------------

@pytest.mark.parametrize("moment", ["parsing", "between commits", "mid-commit"])
@pytest.mark.parametrize("kind", ["file", "lake"])
def test_a_killed_writer_leaves_no_worker_and_no_lock(kind, moment, postgres, corpora, ddp, tmp_path):
    where = str(tmp_path / "shared.duckdb") if kind == "file" else "ducklake:postgres:" + postgres.createdb(
        f"killed_{moment.replace(' ', '_').replace('-', '_')}")
    ingest_paths([corpora[0]], locate(where, str(tmp_path / "lake-data")))  # the lake and its id exist
    flag = tmp_path / "flag"
    mode = "stall" if moment == "mid-commit" else "slow"
    victim = subprocess.Popen([sys.executable, "-m", "tests.ingest_driver", mode, str(flag), "--", "ingest",
                               *map(str, (*corpora[1:], ddp)), "--db", where, "--jobs", "2"],
                              env=machine(tmp_path, "victim") | {"IWH_DRIVER_PARSE_S": "0.5", "IWH_DRIVER_BATCH_RUNS": "1"},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if moment == "parsing":
            wait_until(lambda: len(children(victim.pid)) == 2, 60, "the two parse workers never started")
        else:
            wait_until(flag.exists, 120, "the writer never reached its moment")
        workers = children(victim.pid)
        assert len(workers) == 2, workers
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        wait_until(lambda: not any(alive(w) for w in workers), 3, "a parse worker outlived its writer")
    finally:
        victim.kill()
        victim.wait()
    # the next writer finds the lock free: --wait 10 fails unless it gets it within 10 s
    t0 = time.monotonic()
    done = subprocess.run([*IWH, "ingest", *map(str, (*corpora, ddp)), "--db", where, "--wait", "10", "--format", "json"],
                          env=machine(tmp_path, "next"), capture_output=True, text=True, timeout=300)
    took = time.monotonic() - t0
    assert done.returncode == 0, done.stderr[-2000:]
    assert counts(where)["runs"] == 17 and ranks(where, ddp) == [0, 1], took


def test_a_killed_writers_ray_workers_die_with_it(corpora, tmp_path):
    """A local Ray of the ingest's own (--executor ray): every process of it (its keeper, the parse
    workers, the raylet and the GCS, Ray's dashboard and runtime-env agents) is gone 5 s after a
    `kill -9` of the writer, and the next writer lands its runs at once."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[test]')")
    where = str(tmp_path / "shared.duckdb")
    flag = tmp_path / "flag"
    # Ray's sockets live in TMPDIR, and a socket's path may not pass 107 bytes
    short = tempfile.mkdtemp(prefix="iwh-ray-", dir="/tmp")
    victim = subprocess.Popen([sys.executable, "-m", "tests.ingest_driver", "slow", str(flag), "--", "ingest",
                               *map(str, corpora), "--db", where, "--executor", "ray", "--jobs", "2"],
                              env=machine(tmp_path, "victim") | {"RAY_USAGE_STATS_ENABLED": "0", "TMPDIR": short},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    family: set[int] = set()
    try:
        wait_until(lambda: flag.exists() or victim.poll() is not None, 180, "the writer never committed")
        assert victim.poll() is None, victim.stderr.read()[-2000:]
        family = set(descendants(victim.pid))
        names = [_cmdline(p) for p in family]
        for kind in ("ray_local", "raylet", "gcs_server", "ray::DashboardAgent", "ray::RuntimeEnvAgent"):
            assert any(kind in n for n in names), (kind, names)
        assert any(n.startswith("ray::") and "Agent" not in n for n in names), names  # a parse worker
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        t0 = time.monotonic()
        wait_until(lambda: not any(alive(p) for p in family), 5,
                   f"a process of the killed writer's Ray outlived it: {[_cmdline(p) for p in family if alive(p)]}")
        gone = time.monotonic() - t0
        done = subprocess.run([*IWH, "ingest", *map(str, corpora), "--db", where, "--wait", "10"],
                              env=machine(tmp_path, "next"), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        assert counts(where)["runs"] == 15, gone
    finally:
        victim.kill()
        victim.wait()
        for p in family:  # only when the test failed: nothing of it is left running
            if alive(p):
                os.kill(p, signal.SIGKILL)
        shutil.rmtree(short, ignore_errors=True)


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
