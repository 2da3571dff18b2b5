"""A team warehouse: the dashboard stays up while several machines ingest, on the embedded file and
on a DuckLake (a real PostgreSQL 15 catalog, Parquet data in a folder or in moto's S3 server, all
started by the tests on 127.0.0.1).

"Machines" are separate `iwh ingest` processes, each with its own HOME and TMPDIR. Expected values
come from a serial ingest of the same runs into a plain file, or are counted from the runs here.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.store.api import Warehouse
from inductor_warehouse.store.location import locate
from inductor_warehouse.schema.ddl import TABLES as WAREHOUSE_TABLES
from inductor_warehouse.store.errors import WarehouseError
from inductor_warehouse.store.opening import connect
from tests.conftest import IWH, GPU_TRAIN_RUN, ROOT, VOLATILE, unpack_cpu_corpora

# every table a run writes (a new table is compared as soon as a migration adds it), and the migrations
TABLES = (*WAREHOUSE_TABLES, "_migrations")


@pytest.fixture(scope="module")
def corpora(tmp_path_factory) -> list[Path]:
    """The three bundled CPU corpora (5 runs each), unpacked once for this module."""
    return unpack_cpu_corpora(tmp_path_factory.mktemp("corpora"))


def lake(postgres, name: str) -> str:
    return "ducklake:postgres:" + postgres.createdb(name)


def contents(location, tables=TABLES) -> dict[str, list]:
    """Every row of every table, sorted, without the columns that say when or how fast."""
    con = connect(location, read_only=True)
    try:
        out = {}
        for table in tables:
            cols = [c for (c,) in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() "
                "AND table_name = ? ORDER BY ordinal_position", [table]).fetchall() if c not in VOLATILE]
            if table == "_migrations":
                cols = ["name"]
            quoted = ", ".join(f'"{c}"' for c in cols)
            rows = con.execute(f"SELECT {quoted} FROM {table}").fetchall()
            out[table] = sorted(rows, key=repr)
        return out
    finally:
        con.close()


def counts(location) -> dict[str, int]:
    return {t: len(rows) for t, rows in contents(location).items()}


def machine(tmp_path: Path, name: str) -> dict[str, str]:
    home = tmp_path / f"machine-{name}"
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return {**os.environ, "HOME": str(home), "TMPDIR": str(home / "tmp"), "PYTHONPATH": str(ROOT)}


def consistent(location, expected: dict[str, tuple]) -> int:
    """Every run a reader sees is whole: its graphs and kernels are all there. Returns the runs seen."""
    with Warehouse(location) as wh:
        seen = wh.sql("""SELECT r.run_id, (SELECT count(*) FROM graphs g WHERE g.run_id = r.run_id) AS graphs,
                                (SELECT count(*) FROM kernels k WHERE k.run_id = r.run_id) AS kernels FROM runs r""")
        orphans = wh.sql("SELECT count(*) AS n FROM kernels WHERE run_id NOT IN (SELECT run_id FROM runs)")["n"][0]
    assert orphans == 0
    for run_id, graphs, kernels in seen.iter_rows():
        assert expected[run_id] == (graphs, kernels), run_id
    return seen.height


def shape_of_runs(location) -> dict[str, tuple]:
    with Warehouse(location) as wh:
        return {r: (g, k) for r, g, k in wh.sql("""
            SELECT r.run_id, (SELECT count(*) FROM graphs g WHERE g.run_id = r.run_id),
                   (SELECT count(*) FROM kernels k WHERE k.run_id = r.run_id) FROM runs r""").iter_rows()}


# ---- one location, two kinds --------------------------------------------------------------------

def test_a_lake_holds_what_a_file_holds(postgres, corpora, tmp_path):
    runs = [*corpora, GPU_TRAIN_RUN]
    file_db = str(tmp_path / "wh.duckdb")
    assert ingest_paths(runs, file_db).runs == 16
    where = locate(lake(postgres, "same_as_file"), str(tmp_path / "lake-data"))
    summary = ingest_paths(runs, where)
    assert summary.runs == 16 and summary.errors == ingest_paths(runs, str(tmp_path / "again.duckdb")).errors
    assert contents(where) == contents(file_db)
    # the data files are Parquet in the data path; the catalog remembers where (no --data-path needed now)
    assert list((tmp_path / "lake-data").rglob("*.parquet"))
    with Warehouse(lake_text := where.text) as wh:
        assert wh.query("overview/runs").height == 16
    assert CliRunner().invoke(cli, ["runs", "--db", lake_text, "--format", "json"]).exit_code == 0


def test_the_lake_keeps_its_data_in_s3_compatible_storage(postgres, s3, tmp_path, monkeypatch):
    for k, v in s3.env.items():
        monkeypatch.setenv(k, v)
    bucket = s3.bucket("iwh-lake")
    runs = [FIXTURE_RUN, GPU_TRAIN_RUN]
    where = locate(lake(postgres, "on_s3"), f"{bucket}/team/")
    assert ingest_paths(runs, where).runs == 2
    file_db = str(tmp_path / "wh.duckdb")
    ingest_paths(runs, file_db)
    assert contents(where) == contents(file_db)
    keys = [o["Key"] for o in s3.client().list_objects_v2(Bucket="iwh-lake").get("Contents", [])]
    assert keys and all(k.startswith("team/") and k.endswith(".parquet") for k in keys)
    # another process, with only the location and the AWS_* variables, reads it
    out = subprocess.run([*IWH, "sql", "SELECT count(*) AS n FROM kernels", "--db", where.text, "--format", "csv"],
                         capture_output=True, text=True, env=machine(tmp_path, "reader") | s3.env)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.split()[1]) == len(contents(file_db, ["kernels"])["kernels"])


FIXTURE_RUN = ROOT / "tests" / "fixtures" / "runs" / "cpu-torch2.13" / "transformer"


# ---- concurrency --------------------------------------------------------------------------------

def _jobs(corpora: list[Path], tmp_path: Path) -> list[list[Path]]:
    """Four jobs' runs: each release's five runs, overlapping, and one run copied to another folder
    given to two jobs (same content, so the same run id: it must land once)."""
    runs = sorted(p.parent for c in corpora for p in c.rglob("manifest.json"))
    assert len(runs) == 15
    twin = tmp_path / "elsewhere" / runs[0].name
    shutil.copytree(runs[0], twin)
    return [runs[0:5] + [twin], runs[4:9], runs[8:13] + [twin], runs[12:15] + runs[0:2]]


@pytest.mark.parametrize("kind", ["file", "lake"])
def test_four_concurrent_ingests_land_every_run_exactly_once(kind, postgres, corpora, tmp_path):
    jobs = _jobs(corpora, tmp_path)
    serial = str(tmp_path / "serial.duckdb")
    ingest_paths(sorted({str(r) for job in jobs for r in job}), serial)
    where = str(tmp_path / "shared.duckdb") if kind == "file" else lake(postgres, "four_writers")
    data = ["--data-path", str(tmp_path / "lake-data")] if kind == "lake" else []
    procs = [subprocess.Popen([*IWH, "ingest", *map(str, job), "--db", where, *data],
                              env=machine(tmp_path, str(i)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i, job in enumerate(jobs)]
    results = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [err[-2000:] for _, err in results]
    got, want = counts(where), counts(serial)
    assert got == want and got["runs"] == 15
    with Warehouse(where) as wh:
        assert wh.sql("SELECT run_id FROM runs GROUP BY run_id HAVING count(*) > 1").height == 0
        assert wh.sql("SELECT source_hash FROM kernel_sources GROUP BY 1 HAVING count(*) > 1").height == 0


@pytest.mark.parametrize("kind", ["file", "lake"])
def test_the_dashboard_reads_while_an_ingest_writes(kind, postgres, corpora, tmp_path, monkeypatch):
    """Pages render (AppTest) on the warehouse while another process ingests into it, one run per
    commit; every run a reader sees is whole; after its cache is cleared the page shows the new runs."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    first, rest = corpora[0], corpora[1:]
    expected = shape_of_runs(_serial(corpora, tmp_path))
    where = str(tmp_path / "shared.duckdb") if kind == "file" else lake(postgres, "dash_and_ingest")
    ingest_paths([first], locate(where, str(tmp_path / "lake-data")))
    monkeypatch.setenv("IWH_DB", where)
    at = AppTest.from_file(str(ROOT / "dashboards" / "app.py"), default_timeout=120).run()
    assert not at.exception and _runs_metric(at) == 5
    flag = tmp_path / "committed"
    proc = subprocess.Popen([sys.executable, "-m", "tests.ingest_driver", "slow", str(flag), "--", "ingest",
                             *map(str, rest), "--db", where], env=machine(tmp_path, "ci"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = set()
    while proc.poll() is None or not seen:
        st.cache_data.clear()
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        seen.add(_runs_metric(at))
        seen.add(consistent(where, expected))
    _, err = proc.communicate()
    assert proc.returncode == 0, err[-2000:]
    assert flag.exists() and len(seen) > 1, seen  # the pages were read between commits
    at.run()  # cached: may still show the old numbers
    st.cache_data.clear()
    at.run()
    assert _runs_metric(at) == 15 == consistent(where, expected)


def _runs_metric(at) -> int:
    return int({m.label: m.value for m in at.metric}["Runs"].replace(",", ""))


def _serial(corpora, tmp_path) -> str:
    db = str(tmp_path / "serial.duckdb")
    ingest_paths(corpora, db)
    return db


@pytest.mark.parametrize("kind", ["file", "lake"])
def test_a_writer_killed_mid_commit_leaves_no_partial_run(kind, postgres, corpora, tmp_path):
    expected = shape_of_runs(_serial(corpora, tmp_path))
    where = str(tmp_path / "shared.duckdb") if kind == "file" else lake(postgres, "killed_writer")
    ingest_paths([corpora[0]], locate(where, str(tmp_path / "lake-data")))
    before = counts(where)
    flag = tmp_path / "in_commit"
    proc = subprocess.Popen([sys.executable, "-m", "tests.ingest_driver", "stall", str(flag), "--", "ingest",
                             *map(str, corpora[1:]), "--db", where], env=machine(tmp_path, "victim"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while not flag.exists():
        assert proc.poll() is None and time.time() < deadline, "the writer never reached its commit"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    # the next reader: the old state, whole
    assert counts(where) == before and consistent(where, expected) == 5
    # the next writer: takes the lock the dead one held, and lands everything
    summary = ingest_paths(corpora, where, wait=60)
    assert summary.runs == 10 and summary.skipped_runs == 5
    assert consistent(where, expected) == 15 and counts(where) == counts(str(tmp_path / "serial.duckdb"))


def test_a_second_writer_waits_for_the_lock_within_its_bound(corpora, tmp_path):
    db = str(tmp_path / "w.duckdb")
    ingest_paths([corpora[0]], db)
    # another process in the middle of a write: it holds the file's lock for 4 s
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('held', flush=True); time.sleep(4)", db], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        t0 = time.monotonic()
        with pytest.raises(WarehouseError, match=r"stayed locked by another process \(pid \d+\) for 1 s"):
            ingest_paths([corpora[1]], db, wait=1.0)
        assert 1.0 <= time.monotonic() - t0 < 3
        # a longer wait outlasts the holder
        assert ingest_paths([corpora[1]], db, wait=30).runs == 5
        assert time.monotonic() - t0 >= 3
    finally:
        holder.kill()
        holder.wait()


# ---- moving, secrets, the read-only door ---------------------------------------------------------

def test_a_file_moves_into_a_lake_and_back(postgres, corpora, tmp_path):
    src = str(tmp_path / "local.duckdb")
    ingest_paths([*corpora, GPU_TRAIN_RUN], src)
    team = lake(postgres, "moved")
    res = CliRunner().invoke(cli, ["copy", team, "--data-path", str(tmp_path / "lake-data"), "--db", src])
    assert res.exit_code == 0, res.output
    assert "16 runs" in res.output
    back = str(tmp_path / "back.duckdb")
    res = CliRunner().invoke(cli, ["copy", back, "--db", team])
    assert res.exit_code == 0, res.output
    original = contents(src)
    assert contents(team) == original == contents(back)
    # views and macros came with the schema: the canned queries run on each
    for where in (team, back):
        with Warehouse(where) as wh:
            assert wh.query("overview/runs").height == 16
            assert wh.query("compare/runs", compiler="2.13").height == 5
    again = CliRunner().invoke(cli, ["copy", team, "--db", src])
    assert again.exit_code == 1 and "already holds 16 runs" in again.output
    for where in (team, back):  # the views' digest is the destination's own, written once
        with Warehouse(where) as wh:
            assert wh.con.execute("SELECT count(*) FROM _views").fetchone()[0] == 1


def test_an_older_lake_is_migrated_in_place(postgres, tmp_path):
    """Migration 0011 on a DuckLake: a lake written before run keys (its columns dropped, its record
    of the migration removed) gets them, numbered in ingest order, on every row of each run."""
    from tests.conftest import rows_off_their_runs_key, without_run_keys

    team = lake(postgres, "older")
    data = str(tmp_path / "lake-data")
    assert ingest_paths([FIXTURE_RUN, GPU_TRAIN_RUN], locate(team, data_path=data)).runs == 2
    con = connect(locate(team, data_path=data))
    without_run_keys(con)
    con.close()
    con = connect(locate(team, data_path=data))
    try:
        assert sorted(k for (k,) in con.execute("SELECT run_key FROM runs").fetchall()) == [1, 2]
        for table in ("graphs", "kernels", "ops", "lineage", "run_rollups"):
            assert rows_off_their_runs_key(con, table) == 0, table
    finally:
        con.close()


def test_migration_0012_on_a_lake(postgres, tmp_path):
    """Migration 0012 on a DuckLake: a lake written before it (ca 2.14.1's failures twice and each
    failed guard a recompile) gets the rows a fresh ingest writes."""
    from tests.test_warehouse_tables import EVENTS, TALLIES, as_before_0012, as_before_0035

    team = lake(postgres, "before0012")
    data = str(tmp_path / "lake-data")
    root = unpack_cpu_corpora(tmp_path / "corpora")
    assert ingest_paths([next(root[2].glob("cpu-torch*")) / "ca"], locate(team, data_path=data)).runs == 1
    con = connect(locate(team, data_path=data))
    fresh, tallies = con.execute(EVENTS).fetchall(), con.execute(TALLIES).fetchall()
    as_before_0035(con)
    as_before_0012(con)
    con.close()
    ingest_paths([], locate(team, data_path=data))  # the loader's writer migrates and sums the rollups again
    con = connect(locate(team, data_path=data))
    try:
        assert con.execute(EVENTS).fetchall() == fresh
        assert con.execute(TALLIES).fetchall() == tallies
        assert con.execute("SELECT failures, fallbacks, recompiles FROM run_rollups").fetchall() == [(3, 3, 4)]
    finally:
        con.close()


def test_secrets_stay_out_of_output(postgres, tmp_path):
    where = f"ducklake:postgres:dbname=nowhere host=127.0.0.1 port={postgres.port} user=nobody password=hunter2"
    for args in (["runs", "--db", where], ["ingest", str(FIXTURE_RUN), "--db", where, "--data-path", str(tmp_path)],
                 ["sql", "SELECT 1", "--db", where]):
        res = CliRunner().invoke(cli, args)
        assert res.exit_code != 0 and "hunter2" not in res.output and "password=***" in res.output, res.output
    assert locate(where).printable.endswith("password=***")


def test_the_dashboards_door_to_a_lake_reads_and_nothing_else(postgres, tmp_path):
    """Read-only and locked down: no writes, no ATTACH, no files, no settings; with a SELECT-only
    PostgreSQL role (docs/team.md), not even the catalog database's own functions."""
    name = "locked"
    team = lake(postgres, name)
    ingest_paths([FIXTURE_RUN], locate(team, str(tmp_path / "lake-data")))
    postgres.sql(name, "CREATE ROLE dash LOGIN; GRANT USAGE ON SCHEMA public TO dash; "
                       "GRANT SELECT ON ALL TABLES IN SCHEMA public TO dash")
    viewer = "ducklake:postgres:" + postgres.conninfo(name, user="dash")
    con = connect(viewer, read_only=True, lockdown=True)
    try:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
        for sql in ("CREATE TABLE x (a INT)", "INSERT INTO runs (run_id) VALUES ('x')", "DELETE FROM runs",
                    "SELECT * FROM read_csv('/etc/passwd')", f"ATTACH '{tmp_path}/other.duckdb' AS o",
                    "COPY runs TO '/tmp/iwh-leak.csv'", "SET enable_external_access = true", "SET memory_limit = '64GB'",
                    "INSTALL httpfs",
                    "SELECT * FROM postgres_query('__ducklake_metadata_wh', 'SELECT pg_read_file(''/etc/hostname'')')"):
            with pytest.raises(Exception):  # noqa: B017 - each refusal has its own error class
                con.execute(sql).fetchall()
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    finally:
        con.close()
    assert not Path("/tmp/iwh-leak.csv").exists()


def test_the_password_mask_keeps_what_follows_it():
    from inductor_warehouse.store.location import redact, split_password

    cases = {
        "dbname=iwh password=hunter2 user=iwh": "dbname=iwh password=*** user=iwh",
        # a message's closing quote goes with the value: a password may end with `":` too (libpq reads to a space)
        'Unable to connect at "dbname=x password=hunter2": failed': 'Unable to connect at "dbname=x password=*** failed',
        "postgresql://iwh:hunter2@db/iwh?password=hunter2&sslmode=require": "postgresql://iwh:***@db/iwh?password=***&sslmode=require",
        "password = 'hunter 2' host=db": "password = *** host=db",
        "PGPASSWORD=hunter2\nnext line": "PGPASSWORD=***\nnext line",
        "password authentication failed for user \"iwh\"": "password authentication failed for user \"iwh\"",
    }
    for text, masked in cases.items():
        assert redact(text) == masked
    assert split_password("dbname=iwh password='a b\\'c' user=iwh") == ("dbname=iwh user=iwh", "a b'c")
    assert split_password("postgresql://iwh:p%40ss@db:5432/iwh?sslmode=require") == \
        ("user=iwh host=db port=5432 dbname=iwh sslmode=require", "p@ss")  # a URI, as libpq's key=value
    assert split_password("dbname=iwh user=iwh") == ("dbname=iwh user=iwh", None)


# ---- tidying a lake -----------------------------------------------------------------------------

def test_vacuum_removes_what_killed_writers_left_and_expires_old_snapshots(postgres, corpora, tmp_path):
    import psycopg

    name = "tidied"
    team = lake(postgres, name)
    data = tmp_path / "lake-data"
    ingest_paths([corpora[0]], locate(team, str(data)))
    flag = tmp_path / "in_commit"
    proc = subprocess.Popen([sys.executable, "-m", "tests.ingest_driver", "stall", str(flag), "--", "ingest",
                             *map(str, corpora[1:]), "--db", team], env=machine(tmp_path, "victim"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while not flag.exists():
        assert proc.poll() is None and time.time() < deadline, "the writer never reached its commit"
        time.sleep(0.05)
    time.sleep(0.5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()

    def referenced() -> set[str]:  # the catalog's own record of the lake's data files
        with psycopg.connect(postgres.conninfo(name)) as pg:
            rows = pg.execute("SELECT s.path || t.path || f.path FROM ducklake_data_file f "
                              "JOIN ducklake_table t USING (table_id) JOIN ducklake_schema s USING (schema_id) "
                              "WHERE f.end_snapshot IS NULL AND t.end_snapshot IS NULL").fetchall()
        return {str(data / p) for (p,) in rows}

    on_disk = {str(p) for p in data.rglob("*.parquet")}
    left = on_disk - referenced()
    assert left, "the killed writer left no files: nothing to tidy"
    before = contents(team)
    dry = CliRunner().invoke(cli, ["vacuum", "--db", team, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert {line.split(": ", 1)[1] for line in dry.output.splitlines() if line.startswith("would delete")} == left
    assert f"would delete {len(left)} data files no snapshot references" in dry.output
    assert {str(p) for p in data.rglob("*.parquet")} == on_disk  # a dry run changes nothing
    done = CliRunner().invoke(cli, ["vacuum", "--db", team])
    assert done.exit_code == 0 and f"deleted {len(left)} data files no snapshot references" in done.output, done.output
    assert {str(p) for p in data.rglob("*.parquet")} == referenced() == on_disk - left
    assert contents(team) == before
    # every snapshot but the latest expired: the lake reads the same and takes the next writer
    with psycopg.connect(postgres.conninfo(name)) as pg:
        assert pg.execute("SELECT count(*) FROM ducklake_snapshot").fetchone()[0] > 1
    done = CliRunner().invoke(cli, ["vacuum", "--db", team, "--keep-days", "0"])
    assert done.exit_code == 0, done.output
    with psycopg.connect(postgres.conninfo(name)) as pg:
        assert pg.execute("SELECT count(*) FROM ducklake_snapshot").fetchone()[0] == 1
    assert contents(team) == before
    assert ingest_paths(corpora, team).runs == 10 and counts(team)["runs"] == 15
    res = CliRunner().invoke(cli, ["vacuum", "--db", str(tmp_path / "w.duckdb")])
    assert res.exit_code == 1 and "tidies a lake" in res.output


# ---- serving ------------------------------------------------------------------------------------

def test_a_stopped_dashboard_stops_serving(corpora, tmp_path):
    """`iwh dashboard` is the server: stopping it (a service manager's SIGTERM) leaves nothing serving;
    its health check answers while it runs."""
    import urllib.request

    from tests.servers import free_port

    db = str(tmp_path / "wh.duckdb")
    ingest_paths([corpora[0]], db)
    port = free_port()
    proc = subprocess.Popen([*IWH, "dashboard", "--db", db, "--port", str(port), "--address", "127.0.0.1"],
                            env=machine(tmp_path, "dash"), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    health = f"http://127.0.0.1:{port}/_stcore/health"
    try:
        deadline = time.time() + 60
        while True:
            try:
                assert urllib.request.urlopen(health, timeout=2).read() == b"ok"
                break
            except OSError:
                assert proc.poll() is None and time.time() < deadline, "the dashboard never answered"
                time.sleep(0.2)
        assert f"kill {proc.pid}" in proc.stdout.readline()
        proc.terminate()
        proc.wait(30)
        with pytest.raises(OSError):
            urllib.request.urlopen(health, timeout=2)
    finally:
        proc.kill()
        proc.wait()
