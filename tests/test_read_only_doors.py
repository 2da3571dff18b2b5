"""Read-only by construction (issue 36), on a file warehouse and on a lake (a PostgreSQL 15 catalog whose
location holds a password, Parquet data in moto's S3). The self-named CTEs of a second attack (a
recursive CTE named after a system view or a file, whose anchor DuckDB bound to the real object) and
their variations (tests/fixtures/read_only_sql.txt) are refused at every door: `Warehouse.sql`,
`iwh sql`, the dashboard's SQL console, and as `iwh query` parameters (where they are only text).
Each wall refuses them alone: DuckDB's parser against the allow-list, and DuckDB's binder on the
reader's own connection. A grammar of hostile statements (sources that reach outside, hidden in
CTEs, subqueries and clauses) adds statements nobody wrote out, refused by both walls. Below both,
the reader's connection holds nothing to reach: no secret but the lake's S3 keys DuckDB needs
(redacted, never shown unredacted), no catalog listed, no setting that can be changed."""

from __future__ import annotations

import itertools
import random
import time

import duckdb
import pytest
from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.schema.bound_plan import bound_plans, check_bound_plan
from inductor_warehouse.schema.readonly import TABLE_FUNCTIONS, QueryRefused, check_read_statement, walk
from inductor_warehouse.store.api import Warehouse
from inductor_warehouse.store.extensions import extension_directory
from inductor_warehouse.store.opening import connect
from inductor_warehouse.store.writer import Writer
from tests.conftest import ROOT
from tests.test_read_only import (aws, blackhole, make_warehouses, placeholders, secrets,  # noqa: F401 - fixtures
                                  state, statements)

SELF_NAMED = "self-named CTEs"


@pytest.fixture(scope="module")
def warehouses(postgres, aws, tmp_path_factory) -> dict:  # noqa: F811 - this module's own
    return make_warehouses(postgres, aws, tmp_path_factory.mktemp("doors"), "doors")


def self_named(kind: str, w: dict, blackhole: str, canary) -> list[str]:  # noqa: F811
    found = [sql for sql, runs in statements(SELF_NAMED, **placeholders(kind, w, blackhole, canary)) if not runs]
    assert len(found) > 80
    return found


def clean(out: str, w: dict) -> bool:
    return not any(s in out for s in secrets(w["s3"]))


@pytest.mark.parametrize("kind", ["file", "lake"])
def test_self_named_ctes_are_refused_at_every_door(kind, warehouses, blackhole, tmp_path):  # noqa: F811
    from streamlit.testing.v1 import AppTest

    w = warehouses
    listed = self_named(kind, w, blackhole, tmp_path)
    before = state(kind, w)
    with Warehouse(w[kind]) as wh:
        for sql in listed:
            with pytest.raises(duckdb.Error) as refused:
                wh.sql(sql, timeout=10)
            assert clean(str(refused.value), w), sql
    # `iwh sql` is Warehouse.sql in a command: on a lake, whose every open is a second, every third
    for sql in listed if kind == "file" else listed[::3]:
        res = CliRunner().invoke(cli, ["sql", sql, "--db", w[kind]])
        assert res.exit_code == 1 and "Error:" in res.output and clean(res.output, w), (sql, res.output)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IWH_DB", w[kind])
        at = AppTest.from_file(str(ROOT / "dashboards" / "app.py"), default_timeout=120).run()
        at.switch_page("sections/sql_console.py").run()
        for sql in listed:
            at.text_area(key="console_sql").input(sql).run()
            at.button(key="console_run").click().run()
            assert not at.exception and at.error and "failed" in at.error[0].value, (sql, [e.value for e in at.error])
            assert not at.dataframe and clean(repr(at), w), sql
    assert state(kind, w) == before


@pytest.mark.parametrize("kind", ["file", "lake"])
def test_each_wall_alone_refuses_the_self_named_ctes(kind, warehouses, blackhole, tmp_path):  # noqa: F811
    """The parser's allow-list refuses each whose CTE takes the name of something DuckDB has (a view,
    a table function, a file); DuckDB's binder on the reader's connection, asked without the
    allow-list, refuses each whose names are bound to more than the catalog's description of the
    warehouse (views such as sqlite_master and pg_tables are made of duckdb_tables() and the like,
    which anyone may read), and each that names nothing at all. Most are refused by both; the issue's
    own five are refused by the binder for what they read (a file reader's DuckDB refuses the file
    itself: external access is off)."""
    w = warehouses
    listed = self_named(kind, w, blackhole, tmp_path)
    con = connect(w[kind], read_only=True, lockdown=True)
    try:
        (database,) = con.execute("SELECT current_database()").fetchone()
        by_parser = by_binder = both = 0
        for sql in listed:
            try:
                check_read_statement(sql)
                parser = False
            except duckdb.Error:  # refused, or does not parse
                parser = True
            binder = refused_by_binder(con, sql, database)
            assert parser or binder, sql
            by_parser, by_binder, both = by_parser + parser, by_binder + binder, both + (parser and binder)
        assert both > len(listed) // 2 and by_parser > 60 and by_binder > 50, (both, by_parser, by_binder, len(listed))
        for sql in listed[:5]:  # duckdb_databases, pg_settings, a data file, pg_prepared_statements, duckdb_logs
            with pytest.raises(duckdb.Error, match="is not read here|is not a table|file system operations are disabled"):
                check_bound_plan(con, sql, database)
    finally:
        con.close()


def refused_by_binder(con, sql: str, database: str) -> bool:
    """Whether the binder alone refuses `sql`; when it does not, the statement reads nothing but the
    warehouse's tables and the catalog's description of the warehouse (the allowed table functions)."""
    try:
        check_bound_plan(con, sql, database)
    except duckdb.Error:
        return True
    reads = {item["name"] for item in walk(bound_plans(con, sql)) if item.get("type") == "LOGICAL_GET"}
    assert reads <= TABLE_FUNCTIONS | {"seq_scan", "ducklake_scan"}, (sql, reads)
    return False


# ---- a grammar of hostile statements --------------------------------------------------------------

# what reaches outside the warehouse, each bound without side effects (the allow-list keeps the
# rest, postgres_query and the like, from being bound at all)
SOURCES = ["duckdb_settings", "pg_settings", "duckdb_databases", "duckdb_logs", "pg_prepared_statements",
           "sqlite_master", "pragma_database_list", "duckdb_settings()", "duckdb_secrets()", "duckdb_extensions()",
           "duckdb_variables()", "duckdb_memory()", "read_text('/etc/hostname')", "read_csv('/etc/passwd')",
           "glob('{data}/*')", "'{datafile}'", '"{datafile}"', "read_parquet('{datafile}')", "parquet_metadata('{datafile}')",
           "{catalog}.ducklake_metadata", "information_schema.character_sets", "pg_catalog.pg_settings",
           "system.main.duckdb_settings", "which_secret('s3://{bucket}/x', 's3')"]
# how a source becomes a relation named {name}
HIDES = [
    "WITH RECURSIVE {name} AS (SELECT * FROM {src} UNION ALL SELECT * FROM {name} WHERE false)",
    "WITH RECURSIVE {name} AS (FROM {src} UNION FROM {name} WHERE false)",
    "WITH {name} AS MATERIALIZED (SELECT * FROM {src})",
    "WITH {name} AS (SELECT * FROM {src})",
    "WITH a AS (SELECT * FROM {src}), {name} AS (SELECT * FROM a)",
    "WITH RECURSIVE a AS (SELECT * FROM {name}), {name} AS (SELECT * FROM {src} UNION ALL SELECT * FROM a WHERE false)",
]
# names for it: the source's own (when it has one), a warehouse table's, a plain one
NAMES = ["{own}", "runs", "run_metrics", "x", '"{own}"']
# how its rows reach the answer
USES = [
    "SELECT * FROM {name}",
    "SELECT * FROM runs WHERE run_id IN (SELECT CAST(t AS VARCHAR) FROM {name} t)",
    "SELECT (SELECT count(*) FROM {name})",
    "SELECT * FROM range((SELECT count(*) FROM {name}))",
    "SELECT * FROM run_rollups_of((SELECT list(run_id) FROM runs)), {name}",
    "SELECT * FROM runs UNION ALL BY NAME SELECT * FROM {name}",
    "SELECT * FROM runs, LATERAL (SELECT * FROM {name}) s",
    "SELECT to_json(list(t)) FROM {name} t",
]
WRAPS = ["{q}", "SUMMARIZE ({q})", "EXPLAIN ANALYZE {q}", "DESCRIBE ({q})", "SELECT * FROM ({q})"]


def generated(values: dict, n: int = 240, seed: int = 36) -> list[str]:
    """`n` statements of the grammar (every source at least once), the same on every run."""
    pick = random.Random(seed)
    out = []
    combos = list(itertools.product(SOURCES, HIDES, NAMES, USES, WRAPS))
    pick.shuffle(combos)
    seen_sources: set[str] = set()
    for src, hide, name, use, wrap in combos:
        if len(out) >= n and src in seen_sources:
            continue
        own = src.split("(")[0].split(".")[-1].strip("'\"") if not src.startswith(("'", '"')) else src.strip("'\"")
        named = name.format(own=own)
        query = hide.format(name=named, src=src) + " " + use.format(name=named)
        statement = wrap.format(q=query)
        for key, value in values.items():
            statement = statement.replace("{" + key + "}", str(value))
        out.append(statement)
        seen_sources.add(src)
        if len(out) >= n and len(seen_sources) == len(SOURCES):
            break
    return out


@pytest.mark.parametrize("kind", ["file", "lake"])
def test_generated_hostile_statements_are_refused_by_each_wall(kind, warehouses, blackhole, tmp_path):  # noqa: F811
    w = warehouses
    listed = generated(placeholders(kind, w, blackhole, tmp_path))
    before = state(kind, w)
    con = connect(w[kind], read_only=True, lockdown=True)
    (database,) = con.execute("SELECT current_database()").fetchone()
    bound_refusals = 0
    try:
        with Warehouse(w[kind]) as wh:
            for sql in listed:
                with pytest.raises(duckdb.Error) as refused:
                    wh.sql(sql, timeout=10)
                assert clean(str(refused.value), w), sql
                try:  # the binder, without the allow-list
                    check_bound_plan(con, sql, database)
                except duckdb.Error as alone:
                    assert clean(str(alone), w), sql
                    # for what it reads, or by the reader's own DuckDB, which reaches no file
                    bound_refusals += isinstance(alone, QueryRefused) or "file system operations are disabled" in str(alone)
                else:
                    assert not refused_by_binder(con, sql, database)
    finally:
        con.close()
    assert state(kind, w) == before
    assert bound_refusals > len(listed) // 2, bound_refusals  # most bind, and are refused for what they are


# ---- what the reader's connection holds ----------------------------------------------------------

@pytest.mark.parametrize("kind", ["file", "lake"])
def test_the_readers_connection_holds_only_the_warehouse(kind, warehouses, tmp_path, monkeypatch):
    """Below both walls: DuckDB's own switches are off and locked, no secret but the S3 keys a
    lake's data needs (the catalog's password went with its ATTACH; a user's persistent DuckDB
    secrets are not loaded), and no catalog but the warehouse listed."""
    home = tmp_path / "home"
    with duckdb.connect(config={"secret_directory": str(home / ".duckdb" / "stored_secrets"),
                                "extension_directory": extension_directory()}) as own:
        own.execute("LOAD httpfs")  # an S3 secret's type
        own.execute("CREATE PERSISTENT SECRET users_own (TYPE s3, KEY_ID 'users-key', SECRET 'users-secret')")
    monkeypatch.setenv("HOME", str(home))
    con = connect(warehouses[kind], read_only=True, lockdown=True)
    try:
        settings = dict(con.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN ('enable_external_access', 'lock_configuration', "
            "'autoload_known_extensions', 'autoinstall_known_extensions', 'allow_community_extensions', "
            "'allow_persistent_secrets', 'allow_unredacted_secrets', 'enable_logging')").fetchall())
        assert settings == {"enable_external_access": "false", "lock_configuration": "true",
                            "autoload_known_extensions": "false", "autoinstall_known_extensions": "false",
                            "allow_community_extensions": "false", "allow_persistent_secrets": "false",
                            "allow_unredacted_secrets": "false", "enable_logging": "0"}, settings
        secret_names = sorted(n for (n,) in con.execute("SELECT name FROM duckdb_secrets()").fetchall())
        assert secret_names == ([] if kind == "file" else ["iwh_s3"])
        shown = repr(con.execute("SELECT * FROM duckdb_secrets()").fetchall())
        assert warehouses["s3"].SECRET not in shown and "users-secret" not in shown
        databases = sorted(n for (n,) in con.execute("SELECT database_name FROM duckdb_databases()").fetchall())
        assert databases == (["system", "temp", "wh"] if kind == "file" else ["memory", "system", "temp", "wh"])
        for change in ("SET enable_external_access = true", "SET allow_unredacted_secrets = true",
                       "SET enable_logging = true", "SET memory_limit = '64GB'"):
            with pytest.raises(duckdb.Error):
                con.execute(change)
    finally:
        con.close()


@pytest.mark.parametrize("kind", ["file", "lake"])
def test_a_writers_connection_uses_no_secret_of_the_users(kind, warehouses, tmp_path, monkeypatch):
    """A writer's connection loads none of the user's persistent DuckDB secrets either: one scoped to
    the lake's own bucket would win DuckDB's match over the S3 keys this command was given, and the
    ingest would write with credentials nobody gave it."""
    home = tmp_path / "home"
    scope = f"s3://{warehouses['bucket']}/team"
    with duckdb.connect(config={"secret_directory": str(home / ".duckdb" / "stored_secrets"),
                                "extension_directory": extension_directory()}) as own:
        own.execute("LOAD httpfs")
        own.execute(f"CREATE PERSISTENT SECRET users_own (TYPE s3, KEY_ID 'users-key', SECRET 'users-secret', "
                    f"SCOPE '{scope}')")
    monkeypatch.setenv("HOME", str(home))
    with Writer(warehouses[kind]) as writer, writer.session() as con:
        names = sorted(n for (n,) in con.execute("SELECT name FROM duckdb_secrets()").fetchall())
        assert names == ([] if kind == "file" else ["iwh_s3"]), names
        if kind == "lake":
            (used,) = con.execute("SELECT name FROM which_secret(?, 's3')", [f"{scope}/main/x.parquet"]).fetchone()
            assert used == "iwh_s3"


# ---- canned queries take hostile text as a value -------------------------------------------------

@pytest.mark.parametrize("kind", ["file", "lake"])
def test_hostile_text_as_an_iwh_query_parameter_is_only_text(kind, warehouses, blackhole, tmp_path):  # noqa: F811
    w = warehouses
    listed = self_named(kind, w, blackhole, tmp_path) + [
        "x' OR '1'='1", "'; DROP TABLE runs; --", "$$; SELECT * FROM duckdb_settings(); $$",
        "mlp' UNION SELECT path FROM duckdb_databases --"]
    before = state(kind, w)
    t0 = time.monotonic()
    for text in listed if kind == "file" else listed[::3] + listed[-4:]:
        res = CliRunner().invoke(cli, ["query", "overview/runs", "-p", f"model={text}", "--db", w[kind], "--format", "csv"])
        assert res.exit_code == 0 and clean(res.output, w), (text, res.output)
        assert res.output.strip().splitlines()[1:] == [], (text, res.output)  # no run is named so
    assert state(kind, w) == before, time.monotonic() - t0


# ---- every door bounded, on a lake ---------------------------------------------------------------

def test_every_door_to_a_lake_stops_a_runaway_query_at_IWH_QUERY_TIMEOUT(warehouses, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from inductor_warehouse.schema import queries
    from tests.test_bounds import RUNAWAY

    library = dict(queries._library())
    library["test/runaway"] = queries.Query("test/runaway", "runs for hours", "", (), RUNAWAY)
    monkeypatch.setattr(queries, "_library", lambda: library)
    monkeypatch.setenv("IWH_QUERY_TIMEOUT", "5")
    lake = warehouses["lake"]
    with Warehouse(lake) as wh:
        for call in (lambda: wh.sql(RUNAWAY), lambda: wh.query("test/runaway")):
            t0 = time.monotonic()
            with pytest.raises(QueryRefused, match="stopped after 5 s"):
                call()
            assert 5 <= time.monotonic() - t0 < 8
    monkeypatch.setenv("IWH_DB", lake)
    at = AppTest.from_file(str(ROOT / "dashboards" / "app.py"), default_timeout=120).run()
    at.switch_page("sections/sql_console.py").run()
    at.text_area(key="console_sql").input(RUNAWAY).run()
    t0 = time.monotonic()
    at.button(key="console_run").click().run()
    assert time.monotonic() - t0 < 15 and any("stopped after 5 s" in e.value for e in at.error), [e.value for e in at.error]
