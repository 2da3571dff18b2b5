"""Read-only means read-only. Every statement of tests/fixtures/read_only_sql.txt, and every table
function and extension function the reader's connection knows, is refused or harmless on a file
warehouse and on a lake (a real PostgreSQL 15 catalog whose location holds a password, Parquet data
in moto's S3 with AWS keys in the environment): nothing comes back that holds the password, the S3
key or secret; nothing is written (the file, the catalog's tables and roles, the data files, a
canary folder); every statement ends within the time limit, one that waits on a server that never
answers included. The reads a reader needs run."""

from __future__ import annotations

import hashlib
import socket
import subprocess
import threading
import time
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.store.api import Warehouse
from inductor_warehouse.store.bounds import QueryRefused
from inductor_warehouse.store.location import locate
from inductor_warehouse.schema.readonly import TABLE_FUNCTIONS, read_functions, warehouse_names
from inductor_warehouse.store.lake import LAKE
from inductor_warehouse.store.opening import connect
from tests.conftest import FIXTURES, GPU_TRAIN_RUN, IWH, ROOT

STATEMENTS = FIXTURES / "read_only_sql.txt"
PASSWORD = "pg-fuzz-sekrit-4711"  # trust auth ignores it: it is there to be leaked, or not
RUNS = [FIXTURES / "runs" / "cpu-torch2.13" / "transformer", GPU_TRAIN_RUN]
LIMIT_S = 4.0
READ_MEMORY = "256MB"
GRACE_S = 3.0  # the interrupt's grace, and a busy machine's


@pytest.fixture(scope="module")
def blackhole():
    """A server that accepts connections and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    held = []

    def accept():
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield f"host=127.0.0.1 port={server.getsockname()[1]} dbname=x user=x connect_timeout=600"
    server.close()
    for s in held:
        s.close()


@pytest.fixture(scope="module")
def aws(s3):
    """The S3 server's keys in the environment, and readers of this process bounded to 256 MB: the
    runaway statements run here, and Linux hands this process's peak RSS on to every child it
    starts later (tests/fuzz.py measures its children's)."""
    with pytest.MonkeyPatch.context() as mp:
        for k, v in s3.env.items():
            mp.setenv(k, v)
        mp.setenv("IWH_QUERY_MEMORY", READ_MEMORY)
        yield s3


@pytest.fixture(scope="module")
def warehouses(postgres, aws, tmp_path_factory) -> dict:
    return make_warehouses(postgres, aws, tmp_path_factory.mktemp("read_only"), "fuzz")


def make_warehouses(postgres, s3, root: Path, name: str) -> dict:
    """A file and a lake (its catalog database and bucket named `name`) holding RUNS, and one of each
    one's Parquet data files (a lake's in its bucket; the file warehouse's runs copied out beside it)."""
    file_db = str(root / "wh.duckdb")
    ingest_paths(RUNS, file_db)
    datafile = {"file": str(root / "runs.parquet")}
    with duckdb.connect(file_db, read_only=True) as con:
        con.execute(f"COPY runs TO '{datafile['file']}'")
    postgres.createdb(name)
    lake = f"ducklake:postgres:dbname={name} host=127.0.0.1 port={postgres.port} user={postgres.user} password={PASSWORD}"
    bucket = s3.bucket(f"iwh-{name}")
    ingest_paths(RUNS, locate(lake, f"{bucket}/team/"))
    keys = [o["Key"] for o in s3.client().list_objects_v2(Bucket=f"iwh-{name}", Prefix="team/main/runs/")["Contents"]]
    datafile["lake"] = f"{bucket}/{keys[0]}"
    return {"file": file_db, "lake": lake, "postgres": postgres, "s3": s3, "root": root, "dbname": name,
            "bucket": f"iwh-{name}", "datafile": datafile}


def secrets(s3) -> list[str]:
    return [PASSWORD, s3.SECRET, s3.KEY]


def state(kind: str, w: dict) -> dict:
    """What a statement must not change: the file's bytes and folder; the catalog database's tables,
    their row counts and the cluster's roles; the bucket's objects."""
    if kind == "file":
        path = Path(w["file"])
        return {"bytes": hashlib.sha256(path.read_bytes()).hexdigest(), "folder": sorted(p.name for p in path.parent.iterdir())}
    import psycopg

    with psycopg.connect(w["postgres"].conninfo(w["dbname"]), autocommit=True) as pg:
        tables = pg.execute("SELECT schemaname, tablename FROM pg_tables WHERE schemaname NOT IN "
                            "('pg_catalog', 'information_schema') ORDER BY 1, 2").fetchall()
        rows = {t: pg.execute(f'SELECT count(*) FROM "{s}"."{t}"').fetchone()[0] for s, t in tables}
        roles = pg.execute("SELECT rolname, rolsuper FROM pg_roles ORDER BY 1").fetchall()
        metadata = pg.execute("SELECT key, value FROM ducklake_metadata ORDER BY 1").fetchall()
    objects = sorted(o["Key"] for o in w["s3"].client().list_objects_v2(Bucket=w["bucket"]).get("Contents", []))
    return {"tables": tables, "rows": rows, "roles": roles, "metadata": metadata, "objects": objects}


def statements(section: str | None = None, **values) -> list[tuple[str, bool]]:
    """(statement, whether it must run) for each line of the fixture (of the section whose heading
    holds `section`): the reads a reader needs, and the lines marked `-- harmless:` (they name only
    the warehouse, however they look)."""
    out, needed, wanted = [], False, section is None
    for line in STATEMENTS.read_text().splitlines():
        if line.startswith("# ----"):
            needed = "reads that a reader needs" in line
            wanted = section is None or section in line
        if line.strip() and not line.startswith("#") and wanted:
            for key, value in values.items():
                line = line.replace("{" + key + "}", str(value))
            out.append((line, needed or "-- harmless:" in line))
    return out


def placeholders(kind: str, w: dict, blackhole: str, canary: Path) -> dict:
    """The values of the fixture's {placeholders} for a warehouse of `kind`."""
    data = str(Path(w["file"]).parent) if kind == "file" else f"s3://{w['bucket']}/team"
    return {"catalog": f"__ducklake_metadata_{LAKE}", "blackhole": blackhole, "tmp": canary, "data": data,
            "conninfo": w["postgres"].conninfo(w["dbname"]) + f" password={PASSWORD}", "db": w["file"],
            "bucket": w["bucket"], "datafile": w["datafile"][kind]}


def run(wh: Warehouse, sql: str) -> tuple[bool, str, float]:
    """(ran, what came back, seconds)."""
    t0 = time.monotonic()
    try:
        params = {"model": "mlp"} if "$model" in sql else None
        out, ran = repr(wh.sql(sql, params, timeout=LIMIT_S).rows()), True
    except Exception as e:  # refused: by the allow-list, the binder, a limit
        out, ran = f"{type(e).__name__}: {e}", False
    return ran, out, time.monotonic() - t0


@pytest.mark.parametrize("kind", ["file", "lake"])
def test_every_statement_is_refused_or_harmless(kind, warehouses, blackhole, tmp_path):
    w = warehouses
    where = w[kind]
    canary = tmp_path / "canary"
    canary.mkdir()
    listed = statements(**placeholders(kind, w, blackhole, canary))
    assert len(listed) > 550
    before = state(kind, w)
    wrong = []
    with Warehouse(where) as wh:
        for sql, runs in listed:
            ok, out, took = run(wh, sql)
            for secret in secrets(w["s3"]):
                assert secret not in out, (sql, out)
            assert took < LIMIT_S + GRACE_S, (sql, took)
            if ok != runs:
                wrong.append((sql, out[:300]))
    assert wrong == []  # each line runs when it must, and is refused otherwise
    assert state(kind, w) == before
    assert list(canary.iterdir()) == []


@pytest.mark.parametrize("kind", ["file", "lake"])
def test_every_function_outside_the_allow_list_is_refused(kind, warehouses):
    """All the table functions and the extensions' functions the reader's connection knows (the
    DuckLake, PostgreSQL and httpfs extensions' on a lake): each is refused by the allow-list
    before it runs, whatever its arguments; those on it run, or fail in DuckDB, harmlessly."""
    with Warehouse(warehouses[kind]) as wh:
        known = wh.con.execute("SELECT DISTINCT function_name, function_type FROM duckdb_functions()").fetchall()
        before = state(kind, warehouses)
        allowed = TABLE_FUNCTIONS | warehouse_names()
        tried = 0
        for name, kind_of in known:
            table = kind_of in ("table", "table_macro")
            if name.lower() in (allowed if table else read_functions() | warehouse_names()) or kind_of == "pragma":
                continue
            for args in ("", "'wh'", "'x', 'y', 'z'"):
                sql = f'SELECT * FROM "{name}"({args})' if table else f'SELECT "{name}"({args})'
                with pytest.raises(QueryRefused):
                    wh.sql(sql, timeout=LIMIT_S)
                tried += 1
        for name in sorted(TABLE_FUNCTIONS):
            _, out, took = run(wh, f"SELECT * FROM {name}()")
            assert took < LIMIT_S + GRACE_S and not any(s in out for s in secrets(warehouses["s3"])), (name, out)
    assert state(kind, warehouses) == before
    assert tried > (300 if kind == "lake" else 200), tried


@pytest.mark.parametrize("kind", ["file", "lake"])
def test_no_catalog_function_shows_a_secret_even_to_the_readers_own_connection(kind, warehouses):
    """Below the allow-list, on the connection itself (the dashboard's canned queries use it): no
    table function called without arguments, no setting, no database path shows the catalog's
    password or the S3 secret. (DuckDB lists an S3 secret's key id in duckdb_secrets(), which the
    allow-list refuses.)"""
    con = connect(warehouses[kind], read_only=True, lockdown=True)
    try:
        before = state(kind, warehouses)

        def shown(sql: str) -> str:
            try:
                return repr(con.execute(sql).fetchmany(10_000))
            except Exception as e:  # most need arguments; their errors are output too
                return str(e)

        settings = con.execute("SELECT name FROM duckdb_settings()").fetchall()
        seen = [shown(sql) for sql in ("SELECT * FROM duckdb_settings()", "SELECT * FROM duckdb_databases()",
                                       "SELECT * FROM duckdb_secrets()", "SELECT * FROM pg_settings")]
        seen += [shown(f"SELECT current_setting('{name}')") for (name,) in settings]
        names = [n for (n,) in con.execute("SELECT DISTINCT function_name FROM duckdb_functions() "
                                           "WHERE function_type = 'table'").fetchall()]
        seen += [shown(f'SELECT * FROM "{name}"()') for name in names]
        for out in seen:
            for secret in (PASSWORD, warehouses["s3"].SECRET):
                assert secret not in out, out[:2000]
        assert len(names) > 50
        assert state(kind, warehouses) == before
    finally:
        con.close()


def test_every_door_refuses_alike(warehouses, blackhole):
    """`iwh sql` and the dashboard's SQL console take the same check as Warehouse.sql; a scan of a
    server that never answers is refused at once rather than waited for."""
    from streamlit.testing.v1 import AppTest

    lake = warehouses["lake"]
    scan = f"SELECT * FROM postgres_scan('{blackhole}', 'public', 't')"
    for sql in (scan, "SELECT current_setting('s3_secret_access_key')", "SELECT path FROM duckdb_databases()",
                f"SELECT * FROM postgres_execute('__ducklake_metadata_{LAKE}', 'CREATE TABLE t (x int)')"):
        t0 = time.monotonic()
        res = CliRunner().invoke(cli, ["sql", sql, "--db", lake, "--timeout", "30"])
        assert res.exit_code == 1 and "Error:" in res.output, res.output
        assert time.monotonic() - t0 < 15 and not any(s in res.output for s in secrets(warehouses["s3"]))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IWH_DB", lake)
        at = AppTest.from_file(str(ROOT / "dashboards" / "app.py"), default_timeout=120).run()
        at.switch_page("sections/sql_console.py").run()
        for sql in (scan, "SELECT * FROM __ducklake_metadata_wh.ducklake_metadata"):
            at.text_area(key="console_sql").input(sql).run()
            at.button(key="console_run").click().run()
            assert not at.exception and at.error and "failed" in at.error[0].value, [e.value for e in at.error]
            assert not any(s in repr(at) for s in secrets(warehouses["s3"]))
        # a TIMESTAMPTZ shows (DuckDB's Python rows needed pytz for it)
        at.text_area(key="console_sql").input("SELECT now()::TIMESTAMPTZ AS t, model FROM runs").run()
        at.button(key="console_run").click().run()
        assert not at.error and len(at.dataframe) == 1 and at.dataframe[0].value.shape == (2, 2)


def test_a_query_stops_at_the_limit_when_the_catalog_stops_answering(warehouses):
    """DuckDB cannot interrupt a read waiting on a server: the caller still gets its answer at the
    limit (plus a second's grace), the next statement a new connection."""
    from inductor_warehouse.store.bounds import Stuck
    from tests.servers import Relay

    postgres = warehouses["postgres"]
    relay = Relay(postgres.port)
    try:
        where = f"ducklake:postgres:dbname=fuzz host=127.0.0.1 port={relay.port} user={postgres.user}"
        with Warehouse(where) as wh:
            assert wh.sql("SELECT count(*) AS n FROM runs")["n"][0] == 2
            relay.freeze()
            t0 = time.monotonic()
            with pytest.raises(Stuck, match="stopped after 2 s"):
                wh.sql("SELECT count(*) FROM kernels", timeout=2)
            assert 2 <= time.monotonic() - t0 < 2 + GRACE_S
    finally:
        relay.stop()


def test_iwh_sql_stops_a_runaway_lake_query_in_its_own_process(warehouses, tmp_path):
    """The limit in a process of its own, on a lake: `iwh sql --timeout 2` ends, and says why."""
    res = subprocess.run([*IWH, "sql", "SELECT count(*) FROM range(10000000000000)", "--db", warehouses["lake"],
                          "--timeout", "2"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert res.returncode == 1 and "stopped after 2 s" in res.stderr, res.stderr
    assert PASSWORD not in res.stderr + res.stdout


def test_the_function_list_is_current_and_leaves_out_the_sessions_own():
    """read_functions.txt is what `make schema` makes from the DuckDB installed (a DuckDB upgrade
    shows up here, for its new functions to be looked at), without those that read or change the
    session."""
    from inductor_warehouse.schema.readonly import FUNCTIONS_FILE, SESSION_FUNCTIONS, read_functions_text

    assert FUNCTIONS_FILE.read_text() == read_functions_text(), "run `make schema`"
    assert not SESSION_FUNCTIONS & read_functions() and {"sum", "row_number", "regexp_replace"} <= read_functions()


def test_every_table_view_and_macro_is_read_and_every_canned_query_runs(tmp_path):
    """The allow-list's tables are made from the schema, not written out: every table, view and macro
    of a new warehouse (the production modes' collectives, rank_divergences, spyre_* included) is on
    it, and every canned query, typed as it is into a read-only door, runs and gives what
    `iwh query` gives."""
    from inductor_warehouse.schema import queries

    db = str(tmp_path / "wh.duckdb")
    ingest_paths([*RUNS, FIXTURES / "spyre_provenance" / "level0_and_fused"], db)
    with Warehouse(db) as wh:
        relations = {n.lower() for (n,) in wh.con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() UNION ALL "
            "SELECT view_name FROM duckdb_views() WHERE database_name = current_database() AND NOT internal").fetchall()}
        macros = {n.lower() for (n,) in wh.con.execute(
            "SELECT DISTINCT function_name FROM duckdb_functions() WHERE database_name = current_database() "
            "AND NOT internal AND function_type IN ('macro', 'table_macro')").fetchall()}
        names = relations | macros
        assert names == warehouse_names()
        assert {"collectives", "op_estimates", "graph_executions", "cudagraph_events", "trace_records", "spyre_handles",
                "rank_signatures", "rank_divergences", "run_rollups_of", "version_key"} <= names
        # macros take arguments: the canned queries below call them
        for name in sorted(relations):
            assert wh.sql(f'SELECT * FROM "{name}" LIMIT 1', timeout=LIMIT_S).width > 0, name
        ran = 0
        for q in queries.all_queries():
            ran += wh.sql(q.sql, q.bind({}), timeout=LIMIT_S).height > 0  # the read-only check lets it run
        # the Spyre query's select-list unnest ran, on rows
        assert wh.sql(queries.get("spyre/profiled_kernels").sql, {"run": None}).height == 2
    assert ran > 20, ran
