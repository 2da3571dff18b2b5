"""Clear words for a team lake (issue 36), on a PostgreSQL 15 cluster of this module's own: docs/team.md's
set-up, run as written, makes two lakes that its writer role fills and its dashboard role reads; a
lake whose database missed the per-database grants, and a dashboard role that ingests, are told which
privilege they lack and which GRANT gives it (and that GRANT works); a lake named by a URI whose
password holds every awkward character opens, in each of the ways libpq takes it; and no message
shows a password, whatever it holds."""

from __future__ import annotations

import os
import re
import subprocess
import urllib.parse
from pathlib import Path

import pytest

from inductor_warehouse.store.api import Warehouse
from inductor_warehouse.store.location import redact, split_password
from tests.conftest import GPU_TRAIN_RUN, IWH, ROOT
from tests.servers import PG_BIN, Postgres

DOC = ROOT / "docs" / "team.md"
RUN = ROOT / "tests" / "fixtures" / "runs" / "cpu-torch2.13" / "transformer"
# every character a password may hold that a location spells specially
AWKWARD = "Zq7@Xw:Vk/Jp'Ry\"Tn %40Lm#Ab&Cd?Ef=Gh\\Ij"


@pytest.fixture(scope="module")
def cluster():
    why = Postgres.missing()
    if why:
        pytest.skip(why)
    server = Postgres().start()
    yield server
    server.stop()


def doc_blocks() -> tuple[str, str]:
    """docs/team.md's two set-up blocks: once per server (the roles), once per lake (its database)."""
    blocks = re.findall(r"```\n(.*?)```", DOC.read_text(), re.S)
    server = next(b for b in blocks if "CREATE ROLE iwh " in b)
    lake = next(b for b in blocks if "LAKE_DB=" in b)
    return server, lake


def run_doc(block: str, cluster: Postgres, **env: str) -> None:
    """A block of docs/team.md as a shell runs it, against this cluster instead of db.internal."""
    here = block.replace("-h db.internal -U postgres", f"-h 127.0.0.1 -p {cluster.port} -U {cluster.user}")
    done = subprocess.run(["bash", "-e", "-c", here], capture_output=True, text=True,
                          env={**os.environ, "PATH": f"{PG_BIN}:{os.environ['PATH']}", **env})
    assert done.returncode == 0, (here, done.stderr)


def lake(cluster: Postgres, db: str, user: str) -> str:
    return f"ducklake:postgres:dbname={db} host=127.0.0.1 port={cluster.port} user={user}"


def iwh(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*IWH, *args], capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)})


def test_docs_team_md_sets_up_two_lakes_and_says_what_a_third_lacks(cluster, tmp_path):
    server, per_lake = doc_blocks()
    assert "LAKE_DB=iwh\n" in per_lake and "default privileges" in DOC.read_text().lower()
    run_doc(server, cluster)
    for db in ("iwh", "iwh_nightly"):
        run_doc(per_lake.replace("LAKE_DB=iwh\n", f"LAKE_DB={db}\n"), cluster)
        done = iwh("ingest", str(RUN), "--db", lake(cluster, db, "iwh_ci"), "--data-path", str(tmp_path / db), tmp_path=tmp_path)
        assert done.returncode == 0, done.stderr
        shown = iwh("runs", "--db", lake(cluster, db, "iwh_dash"), "--format", "csv", tmp_path=tmp_path)
        assert shown.returncode == 0 and "transformer" in shown.stdout, (db, shown.stderr)
    # a third lake whose database missed the per-database line: the dashboard's role is told what to grant
    subprocess.run([str(PG_BIN / "createdb"), "-h", "127.0.0.1", "-p", str(cluster.port), "-U", cluster.user, "-O", "iwh",
                    "iwh_third"], check=True)
    assert iwh("ingest", str(RUN), "--db", lake(cluster, "iwh_third", "iwh_ci"), "--data-path",
               str(tmp_path / "third"), tmp_path=tmp_path).returncode == 0
    refused = iwh("runs", "--db", lake(cluster, "iwh_third", "iwh_dash"), tmp_path=tmp_path)
    said = refused.stderr
    assert refused.returncode == 1 and "role iwh_dash lacks SELECT on table ducklake_" in said, said
    assert "in database iwh_third" in said and "Traceback" not in said
    grant = re.search(r"GRANT USAGE ON SCHEMA public TO iwh_dash; GRANT SELECT ON ALL TABLES IN SCHEMA public TO iwh_dash", said)
    assert grant, said
    cluster.sql("iwh_third", grant[0])  # what it says to run, run
    assert iwh("runs", "--db", lake(cluster, "iwh_third", "iwh_dash"), tmp_path=tmp_path).returncode == 0


def test_a_read_only_roles_ingest_names_the_privilege_and_the_grant(cluster, tmp_path):
    """The dashboard's role (SELECT only) ingesting: PostgreSQL's cause, which DuckLake reports as
    "Failed to commit DuckLake transaction", comes out as the role, the privilege, the table and the
    GRANT; the GRANT, run by the tables' owner, lets it write."""
    server, per_lake = doc_blocks()
    if not cluster_has_role(cluster, "iwh_dash"):
        run_doc(server, cluster)
    run_doc(per_lake.replace("LAKE_DB=iwh\n", "LAKE_DB=iwh_ro\n"), cluster)
    assert iwh("ingest", str(RUN), "--db", lake(cluster, "iwh_ro", "iwh_ci"), "--data-path", str(tmp_path / "ro"),
               tmp_path=tmp_path).returncode == 0
    refused = iwh("ingest", str(GPU_TRAIN_RUN), "--db", lake(cluster, "iwh_ro", "iwh_dash"), tmp_path=tmp_path)
    said = refused.stderr
    assert refused.returncode == 1 and "Traceback" not in said, said
    assert re.search(r"PostgreSQL role iwh_dash lacks (INSERT|UPDATE|DELETE) on table ducklake_\w+", said), said
    assert "as iwh (the tables' owner)" in said and "GRANT iwh TO iwh_dash" in said
    grant = re.search(r"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO iwh_dash", said)
    assert grant, said
    import psycopg

    with psycopg.connect(f"dbname=iwh_ro host=127.0.0.1 port={cluster.port} user=iwh", autocommit=True) as owner:
        owner.execute(grant[0])
    again = iwh("ingest", str(GPU_TRAIN_RUN), "--db", lake(cluster, "iwh_ro", "iwh_dash"), tmp_path=tmp_path)
    assert again.returncode == 0, again.stderr


def cluster_has_role(cluster: Postgres, name: str) -> bool:
    import psycopg

    with psycopg.connect(cluster.conninfo("postgres"), autocommit=True) as con:
        return con.execute("SELECT count(*) FROM pg_roles WHERE rolname = %s", [name]).fetchone()[0] == 1


def test_a_lake_named_by_a_uri_with_a_password_opens(cluster, tmp_path):
    """A role that must give its password (scram-sha-256), which holds @ : / ' " a space % # & ? = and
    a backslash: the lake opens, is written and read, named by a percent-encoded URI, by a URI whose
    password is written as it is (all but % and ?, which libpq reads as an escape and the query), by a
    URI's password parameter and by a key=value location with the password quoted; a wrong password
    is refused in words that show none of it."""
    raw = AWKWARD.replace("%40", "").replace("?", "")  # unencoded, % would start an escape and ? the query
    cluster.password_role("iwh_pw", AWKWARD)
    cluster.password_role("iwh_raw", raw)
    cluster.createdb("uri", owner="iwh_pw")
    cluster.sql("uri", "GRANT iwh_pw TO iwh_raw")  # reads the lake as a member of its owner
    host = f"127.0.0.1:{cluster.port}"
    quoted = AWKWARD.replace("\\", "\\\\").replace("'", "\\'")
    spellings = [
        f"ducklake:postgres:postgresql://iwh_pw:{urllib.parse.quote(AWKWARD, safe='')}@{host}/uri",
        f"ducklake:postgres:postgresql://iwh_raw:{raw}@{host}/uri",
        f"ducklake:postgres:dbname=uri host=127.0.0.1 port={cluster.port} user=iwh_pw password='{quoted}'",
        f"ducklake:postgres:postgresql://iwh_pw@{host}/uri?password={urllib.parse.quote(AWKWARD, safe='')}",
    ]
    first = iwh("ingest", str(RUN), "--db", spellings[0], "--data-path", str(tmp_path / "data"), tmp_path=tmp_path)
    assert first.returncode == 0, first.stderr
    assert_masked(first.stdout + first.stderr, AWKWARD)
    for where in spellings:
        password = raw if "iwh_raw" in where else AWKWARD
        shown = iwh("runs", "--db", where, "--format", "csv", tmp_path=tmp_path)
        assert shown.returncode == 0 and "transformer" in shown.stdout, (where, shown.stderr)
        assert_masked(shown.stdout + shown.stderr, password)
        with Warehouse(where) as wh:
            assert wh.sql("SELECT count(*) AS n FROM runs")["n"][0] == 1
            assert_masked(wh.path, password)
    wrong = iwh("runs", "--db", spellings[0].replace("Zq7", "Zq8"), tmp_path=tmp_path)
    assert wrong.returncode == 1 and "password authentication failed" in wrong.stderr, wrong.stderr
    assert_masked(wrong.stderr, AWKWARD.replace("Zq7", "Zq8"))


def test_two_passwords_in_a_location_leave_none_in_the_readers_database_list(cluster, tmp_path):
    """libpq takes the last `password` of a location (a URI's `?password=` after its `user:pw@`): that
    one is the secret the lake opens with, and none is left in the ATTACH path that duckdb_databases()
    lists on the reader's own connection (the trust hunt's defect 3)."""
    from inductor_warehouse.ingest.load import ingest_paths
    from inductor_warehouse.store.location import locate

    real = "Wr1ters-Zq7-s3cret"
    cluster.password_role("iwh_two", real)
    cluster.createdb("two", owner="iwh_two")
    spellings = [
        f"ducklake:postgres:dbname=two host=127.0.0.1 port={cluster.port} user=iwh_two password=decoy-Xy1 password={real}",
        f"ducklake:postgres:postgresql://iwh_two:decoy-Xy1@127.0.0.1:{cluster.port}/two?password={real}",
    ]
    ingest_paths([RUN], locate(spellings[0], str(tmp_path / "data")))
    for where in spellings:
        with Warehouse(where) as wh:
            assert wh.sql("SELECT count(*) AS n FROM runs")["n"][0] == 1, where
            listed = str(wh.con.execute("SELECT database_name, path FROM duckdb_databases()").fetchall())
            assert "127.0.0.1" in listed and "password" not in listed and "decoy" not in listed, listed
            assert_masked(listed + wh.path, real)


def assert_masked(text: str, password: str) -> None:
    """No four characters of the password in a row are left in `text`, in any spelling of it."""
    spellings = {password, urllib.parse.quote(password, safe=""), password.replace("'", "\\'")}
    for spelled in spellings:
        windows = {spelled[i:i + 4] for i in range(len(spelled) - 3)}
        left = [w for w in windows if w in text]
        assert not left, (left, text[:2000])


def test_the_mask_hides_every_character_a_password_may_hold():
    """redact() of each way a location or a message may hold a password leaves none of it, and keeps
    what follows (the host, the next key); split_password() gives it back whole."""
    encoded = urllib.parse.quote(AWKWARD, safe="")
    quoted = AWKWARD.replace("\\", "\\\\").replace("'", "\\'")
    doubled = AWKWARD.replace("'", "''")
    cases = [  # (text, the password in it, what must stay)
        (f"postgresql://iwh:{encoded}@db.internal:5432/iwh?sslmode=require", AWKWARD, "db.internal:5432/iwh?sslmode=require"),
        (f"postgresql://iwh:{AWKWARD}@db.internal/iwh", AWKWARD, "@db.internal/iwh"),
        (f"postgresql://iwh@db.internal/iwh?password={encoded}&sslmode=require", AWKWARD, "&sslmode=require"),
        (f"dbname=iwh password='{quoted}' host=db.internal", AWKWARD, "host=db.internal"),
        (f'Unable to connect to Postgres at "dbname=iwh password=\'{quoted}\' user=iwh": failed', AWKWARD, 'user=iwh": failed'),
        (f"CREATE OR REPLACE SECRET wh_catalog (TYPE postgres, PASSWORD '{doubled}')", AWKWARD, "TYPE postgres"),
        ("dbname=iwh password=Leak9@x:y/z host=db", "Leak9@x:y/z", "host=db"),
        ("postgresql://iwh:Leak9@Leak9@db/iwh", "Leak9@Leak9", "@db/iwh"),  # the issue's: the rest stayed visible
    ]
    for text, password, kept in cases:
        masked = redact(text)
        assert kept in masked, (text, masked)
        assert_masked(masked, password)
    assert split_password(f"postgresql://iwh:{encoded}@db.internal/iwh")[1] == AWKWARD
    assert split_password(f"dbname=iwh password='{quoted}' host=db")[1] == AWKWARD
    raw = AWKWARD.replace("%40", "").replace("?", "")
    assert split_password(f"postgresql://iwh:{raw}@db/iwh") == ("user=iwh host=db dbname=iwh", raw)
