"""Backfills on a distributed engine: runs read from object storage (moto's S3 server) and parsed in
Ray tasks (a local Ray of 2 CPUs, started once for the module) land exactly what a local ingest of
the same runs lands. Expected values come from a local ingest with the local executor; the runs are
the 15 real CPU corpus runs, the GPU training run and a TORCH_TRACE log long enough to be spilled.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest import load, remote
from inductor_warehouse.ingest.discover import discover
from inductor_warehouse.ingest.listing import SNIFF_BYTES
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.ingest.parsers import torch_trace
from inductor_warehouse.ingest.ray_local import descendants
from inductor_warehouse.schema.ddl import TABLES
from tests.conftest import IWH, GPU_TRAIN_RUN, ROOT, VOLATILE, reader, unpack_cpu_corpora

BUCKET = "backfill"


@pytest.fixture(scope="module")
def runs_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("backfill") / "runs"
    unpack_cpu_corpora(root)
    shutil.copytree(GPU_TRAIN_RUN, root / "gpu-torch2.11" / GPU_TRAIN_RUN.name)
    # one log past the spill threshold: its rows leave a Ray task as Parquet bytes
    log = next((GPU_TRAIN_RUN / "trace").glob("*.log")).read_bytes()
    long = root / "long" / "dedicated_log_torch_trace_long.log"
    long.parent.mkdir(parents=True)
    long.write_bytes(log * (torch_trace.SINK_EVERY // len(log) + 2))
    (long.parent / "notes.txt").write_text("what this log is\n")  # no reader takes it: skipped, and named
    return root


@pytest.fixture(scope="module")
def local_db(runs_root, tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("local") / "wh.duckdb")
    assert ingest_paths([runs_root], db, jobs=2).runs == 17
    return db


def upload(s3, root: Path, prefix: str) -> str:
    c = s3.client()
    files = [f for f in sorted(root.rglob("*")) if f.is_file()]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda f: c.upload_file(str(f), BUCKET, f"{prefix}/{f.relative_to(root).as_posix()}"), files))
    return f"s3://{BUCKET}/{prefix}"


@pytest.fixture(scope="module")
def bucket(s3) -> str:
    """The bucket every test here uploads to, made once (whichever test of the module runs first)."""
    return s3.bucket(BUCKET)


@pytest.fixture(scope="module")
def url(s3, bucket, runs_root) -> str:
    return upload(s3, runs_root, "corpus")


@pytest.fixture(scope="module")
def env(s3) -> dict[str, str]:
    return {**os.environ, **s3.env, "PYTHONPATH": str(ROOT)}


@pytest.fixture
def aws(s3, monkeypatch):
    """This process reads the moto server (a fresh client: the cached one may have other settings)."""
    for k, v in s3.env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(remote, "_CLIENTS", {})


@pytest.fixture(scope="module")
def s3_db(url, env, tmp_path_factory) -> tuple[str, dict]:
    db = str(tmp_path_factory.mktemp("s3") / "wh.duckdb")
    done = subprocess.run(IWH + ["ingest", url, "--db", db, "--jobs", "2", "--format", "json"], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return db, json.loads(done.stdout)


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray of 2 CPUs, as a cluster an ingest joins; its workers know no AWS_* settings, as a
    cluster's need not."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[test]'): --executor ray untested")
    before = dict(os.environ)
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    for k in [k for k in os.environ if k.startswith("AWS_")]:
        del os.environ[k]
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    # what Ray set for itself (RAY_AUTH_MODE: a driver that joins the cluster needs it to send its token)
    joining = {k: v for k, v in os.environ.items() if k.startswith("RAY_")}
    yield ray, joining
    ray.shutdown()
    os.environ.clear()
    os.environ.update(before)


def contents(db: str, source=lambda p: p, mtimes: bool = True) -> dict[str, list]:
    """Every row of every table, sorted, without when and how fast; `source` maps runs.source_path."""
    con = reader(db)
    try:
        out = {}
        for table in TABLES:
            cols = [c for (c,) in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() "
                "AND table_name = ? ORDER BY ordinal_position", [table]).fetchall()
                if c not in VOLATILE and (mtimes or (table, c) != ("artifacts", "mtime"))]
            quoted = ", ".join(f'"{c}"' for c in cols)
            rows = con.execute(f"SELECT {quoted} FROM {table}").fetchall()
            if table == "runs":
                i = cols.index("source_path")
                rows = [(*r[:i], source(r[i]), *r[i + 1:]) for r in rows]
            out[table] = sorted(rows, key=repr)
        return out
    finally:
        con.close()


def as_local(url: str, root: Path):
    return lambda p: p.replace(url, str(root), 1) if p.startswith(url + "/") else f"not under {url}: {p}"


# artifacts.mtime of an object is its LastModified, the time of the upload: all else is equal
def test_an_s3_prefix_lands_what_its_local_copy_lands(s3_db, local_db, url, runs_root):
    db, summary = s3_db
    assert (summary["runs"], summary["errors"], summary["failed_runs"]) == (17, 0, 0)
    assert contents(db, as_local(url, runs_root), mtimes=False) == contents(local_db, mtimes=False)
    con = reader(local_db)
    local_ids = sorted(r for (r,) in con.execute("SELECT run_id FROM runs").fetchall())
    con.close()
    assert sorted(summary["run_ids"]) == local_ids  # the same artifacts, the same run ids
    # the files skipped are named by their URLs, as the local copy's by their paths
    local = discover([runs_root]).skipped.paths
    assert f"{url}/long/notes.txt" in summary["skipped_paths"]["unrecognised file"]
    assert summary["skipped_paths"] == {k: [p.replace(str(runs_root), url, 1) for p in v] for k, v in local.items()}


def test_a_second_ingest_of_the_prefix_skips_every_run_and_downloads_nothing(s3_db, url, aws, tmp_path, monkeypatch):
    db = str(tmp_path / "wh.duckdb")
    shutil.copyfile(s3_db[0], db)
    gets: list[str | None] = []  # the Range of each GetObject request (None: the whole object)
    made, hooked = remote.client, set()

    def counted():
        c = made()
        if id(c) not in hooked:
            hooked.add(id(c))
            c.meta.events.register("provide-client-params.s3.GetObject", lambda params, **_: gets.append(params.get("Range")))
        return c

    monkeypatch.setattr(remote, "client", counted)
    monkeypatch.setattr(load, "assemble", lambda *a, **k: pytest.fail("an unchanged run was parsed"))
    again = ingest_paths([url], db)
    assert (again.runs, again.skipped_runs, again.errors) == (0, 17, 0)
    # no object was downloaded; what was read is discovery's sniff of the files only their content
    # names (trace logs, stderr), as a local re-ingest reads them: the first 8 KB, a few per run
    assert None not in gets and set(gets) == {f"bytes=0-{SNIFF_BYTES - 1}"}, gets
    assert len(gets) <= 2 * 17 + 1  # and the stray notes.txt, sniffed to be skipped

    # new LastModified times, same content (the objects uploaded again): hashed, not parsed, skipped
    with duckdb.connect(db) as con:
        run_id, files = con.execute("SELECT run_id, count(*) FROM artifacts GROUP BY run_id ORDER BY run_id LIMIT 1").fetchone()
        con.execute("UPDATE artifacts SET mtime = mtime - 60 WHERE run_id = ?", [run_id])
    gets.clear()
    touched = ingest_paths([url], db)
    assert (touched.runs, touched.skipped_runs) == (0, 17)
    assert gets.count(None) == files  # that run's files, each read whole once to hash it
    gets.clear()
    assert ingest_paths([url], db).skipped_runs == 17 and None not in gets  # the new mtimes were recorded

    absent = ingest_paths([f"s3://{BUCKET}/no-such-prefix"], db)
    assert (absent.runs, absent.missing) == (0, [f"s3://{BUCKET}/no-such-prefix"])


def test_ray_tasks_land_what_local_processes_land(ray_cluster, runs_root, local_db, tmp_path):
    assert (runs_root / "long" / "dedicated_log_torch_trace_long.log").stat().st_size > torch_trace.SINK_EVERY
    db = str(tmp_path / "wh.duckdb")
    summary = ingest_paths([runs_root], db, jobs=2, executor="ray")
    assert (summary.runs, summary.errors, summary.failed) == (17, 0, 0)
    assert contents(db) == contents(local_db)


def test_ray_tasks_read_an_s3_prefix_on_an_existing_cluster(ray_cluster, url, runs_root, local_db, env, tmp_path):
    ray, joining = ray_cluster
    db = str(tmp_path / "wh.duckdb")
    address = ray.get_runtime_context().gcs_address  # its workers lack AWS_*: the tasks get the ingest's
    done = subprocess.run(IWH + ["ingest", url, "--db", db, "--executor", "ray", "--ray-address", address,
                                 "--format", "json"], cwd=ROOT, env={**env, **joining}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (json.loads(done.stdout)["runs"], json.loads(done.stdout)["errors"]) == (17, 0)
    assert contents(db, as_local(url, runs_root), mtimes=False) == contents(local_db, mtimes=False)

    @ray.remote
    def alive():
        return 1

    assert ray.get(alive.remote()) == 1  # the ingest left the cluster it joined running


def test_a_run_whose_ray_task_fails_is_an_error_and_the_others_land(ray_cluster, s3, bucket, runs_root, aws, tmp_path):
    """An object archived to Glacier cannot be read: the task fetching its run raises in the worker."""
    prefix = "archived"
    upload(s3, GPU_TRAIN_RUN, f"{prefix}/gpu")
    cnn = runs_root / "cpu-torch2.6.0" / "cpu-torch2.6.0" / "cnn"
    upload(s3, cnn, f"{prefix}/cnn")
    out = next(cnn.rglob("output_code.py"))
    key = f"{prefix}/cnn/{out.relative_to(cnn).as_posix()}"
    s3.client().put_object(Bucket=BUCKET, Key=key, Body=out.read_bytes(), StorageClass="GLACIER")
    url, db = f"s3://{BUCKET}/{prefix}", str(tmp_path / "wh.duckdb")

    summary = ingest_paths([url], db, jobs=2, executor="ray")
    assert (summary.runs, summary.failed, summary.errors) == (1, 1, 1)
    [row] = summary.error_rows
    assert (row["run_id"], row["kind"], row["severity"], row["path"]) == (None, "parse", "error", f"{url}/cnn")
    assert "FetchError" in row["message"] and "InvalidObjectState" in row["message"] and key in row["message"]

    def state() -> tuple[int, list]:
        con = reader(db)
        try:
            return (con.execute("SELECT count(*) FROM runs").fetchone()[0],
                    con.execute("SELECT path FROM ingest_errors WHERE run_id IS NULL AND kind = 'parse'").fetchall())
        finally:
            con.close()

    assert state() == (1, [(f"{url}/cnn",)])
    # nothing of the run was recorded: the next ingest tries it again, and its error replaces the last
    assert (ingest_paths([url], db).failed, state()) == (1, (1, [(f"{url}/cnn",)]))
    s3.client().put_object(Bucket=BUCKET, Key=key, Body=out.read_bytes())  # restored from the archive
    again = ingest_paths([url], db)
    assert (again.runs, again.skipped_runs, again.failed) == (1, 1, 0)
    assert state() == (2, [])


def test_the_executor_is_checked_before_anything_runs(tmp_path):
    db = str(tmp_path / "wh.duckdb")
    bad = CliRunner().invoke(cli, ["ingest", str(GPU_TRAIN_RUN), "--db", db, "--executor", "spark"])
    assert bad.exit_code == 2 and "not local, ray or ray://HOST:PORT" in bad.output
    bad = CliRunner().invoke(cli, ["ingest", str(GPU_TRAIN_RUN), "--db", db, "--ray-address", "head:6379"])
    assert bad.exit_code == 2 and "--ray-address needs --executor ray" in bad.output
    assert not Path(db).exists()


# ---- secrets nowhere (issue 36) -----------------------------------------------------------------

def test_a_ray_backfill_from_s3_leaves_no_secret_in_ps_environments_or_logs(s3, bucket, runs_root, postgres, tmp_path):
    """`iwh ingest s3://... --executor ray` into a lake whose location holds a password, with the S3
    keys, a session token and PGPASSWORD in the writer's environment: no process below the writer
    (its Ray's keeper, GCS, raylet, agents, workers) shows any of them on its command line or in its
    environment, sampled all along the ingest, and no file Ray wrote (session logs included) holds
    one. Ray once carried the S3 secret on a worker's set-up command line and wrote it 7 times into
    runtime_env_agent.log."""
    pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[test]')")
    cnn = runs_root / "cpu-torch2.6.0" / "cpu-torch2.6.0" / "cnn"
    upload(s3, GPU_TRAIN_RUN, "secrets/gpu")
    url = upload(s3, cnn, "secrets/cnn").rsplit("/", 1)[0]
    password, pg_env, token = "pg-Leak9@x:y/z'q", "pg-env-sekrit-5150", "iwh-session-token-4242"
    postgres.sql("postgres", "CREATE DATABASE secrets")
    quoted = password.replace("'", "\\'")
    lake = f"ducklake:postgres:dbname=secrets host=127.0.0.1 port={postgres.port} user={postgres.user} password='{quoted}'"
    short = tempfile.mkdtemp(prefix="iwh-ray-", dir="/tmp")  # Ray's sockets and session folders: TMPDIR/ray
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, **s3.env, "AWS_SESSION_TOKEN": token, "PGPASSWORD": pg_env, "IWH_DB": lake,
           "IWH_DATA_PATH": str(tmp_path / "lake-data"), "TMPDIR": short, "HOME": str(home),
           "RAY_USAGE_STATS_ENABLED": "0", "PYTHONPATH": str(ROOT)}
    secrets = [s3.SECRET, s3.KEY, token, password, pg_env, "pg-Leak9"]
    try:
        proc = subprocess.Popen(IWH + ["ingest", url, "--executor", "ray", "--jobs", "2", "--format", "json"],
                                cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        samples, seen = 0, set()
        while proc.poll() is None:
            for pid in descendants(proc.pid):
                for part in ("cmdline", "environ"):
                    try:
                        text = Path(f"/proc/{pid}/{part}").read_bytes().decode(errors="replace")
                    except OSError:
                        continue  # ended meanwhile
                    leaked = [s for s in secrets if s in text] + (["AWS_"] if part == "environ" and "AWS_" in text else [])
                    assert not leaked, (pid, part, leaked, text.replace("\0", " ")[:500])
                    if part == "cmdline":
                        seen.add(text.split("\0")[0].rsplit("/", 1)[-1])
            samples += 1
            time.sleep(0.05)
        out, err = proc.communicate()
        assert proc.returncode == 0, err.decode()[-3000:]
        summary = json.loads(out)
        assert (summary["runs"], summary["errors"]) == (2, 0), summary
        assert {"raylet", "gcs_server"} <= seen and samples > 20, (seen, samples)
        files = [f for root in (Path(short), home) for f in root.rglob("*") if f.is_file() and not f.is_socket()]
        logs = [f for f in files if f.parent.name == "logs"]
        assert any(f.name.startswith("runtime_env_agent") for f in logs) and len(logs) > 10, [f.name for f in logs]
        for f in files:
            data = f.read_bytes()
            assert not [s for s in secrets if s.encode() in data], f
        assert not any(s in (out + err).decode() for s in secrets)
    finally:
        shutil.rmtree(short, ignore_errors=True)
