"""schema.ddl.TABLES names every table a user sees (the loader writes its FACT_TABLES, export
offers TABLES): it must equal what the migrations create, bookkeeping tables aside."""

from __future__ import annotations

import re

import duckdb
import pytest

from inductor_warehouse.store.migrate import migrate
from inductor_warehouse.schema.ddl import (_DEFINED, CURRENT, FACT_TABLES, POINT_TABLES, SHARED_TEXTS, TABLES, current_tables,
                                           migration_files, view_files)
from inductor_warehouse.store.migrate import current_sql, migrated_tables
from inductor_warehouse.store.opening import connect


def test_the_table_list_is_the_migrations_tables():
    made = {name for name, _ in current_tables() if not name.startswith("_")}
    assert set(TABLES) == made and len(TABLES) == len(set(TABLES))
    assert set(FACT_TABLES) == made - {"runs", *SHARED_TEXTS, *POINT_TABLES}


def test_current_sql_is_what_the_migrations_make():
    assert CURRENT.read_text() == current_sql(), "schema/current.sql is out of date: run `make schema`"


_TABLES = "SELECT table_name, sql FROM duckdb_tables() ORDER BY table_name"
# each view's columns and their types (its SQL as DuckDB prints it varies: `AS DOUBLE`, `AS "DOUBLE"`)
_VIEW_COLUMNS = ("SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE table_name IN "
                 "(SELECT view_name FROM duckdb_views() WHERE NOT internal) ORDER BY table_name, column_index")
_MACROS = ("SELECT function_name, function_type FROM duckdb_functions() "
           "WHERE function_type IN ('macro', 'table_macro') AND NOT internal ORDER BY 1")


def test_a_new_warehouse_has_what_every_migration_makes(tmp_path):
    """A new file is made from current.sql in one transaction, an old one migration by migration:
    both end with the same tables, views, macros and migrations recorded."""
    con = connect(str(tmp_path / "new.duckdb"))
    try:
        tables, views, macros = (con.execute(q).fetchall() for q in (_TABLES, _VIEW_COLUMNS, _MACROS))
        recorded = [r[0] for r in con.execute("SELECT name FROM _migrations ORDER BY name").fetchall()]
    finally:
        con.close()
    assert tables == migrated_tables()
    assert recorded == [p.stem for p in migration_files()]
    old = duckdb.connect(str(tmp_path / "old.duckdb"))
    try:
        old.execute("CREATE TABLE _migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)")
        old.execute(migration_files()[0].read_text())  # a warehouse of the first version ...
        old.execute("INSERT INTO _migrations VALUES (?, now())", [migration_files()[0].stem])
        assert migrate(old) == [p.stem for p in migration_files()[1:]]  # ... upgraded in place
        assert [old.execute(q).fetchall() for q in (_TABLES, _VIEW_COLUMNS, _MACROS)] == [tables, views, macros]
    finally:
        old.close()
    defined = {name for path in view_files() for name in _DEFINED.findall(path.read_text())}
    assert {v[0] for v in views} | {name for name, _ in macros} == defined and len(defined) == 64


def as_before_0012(con) -> None:
    """Make a warehouse as one written before migration 0012: each failed guard of a recompile a row,
    each failure a second time as its dynamo_error artifact said it, no details / fallback /
    in_library, no extern ops on timings, rollups without the new sums; the migration not recorded."""
    con.execute("""
        CREATE TEMP TABLE split AS
        SELECT e.* EXCLUDE (reason, details, fallback, in_library), unnest(e.details) AS reason
        FROM compile_events e WHERE kind = 'recompile'""")
    con.execute("DELETE FROM compile_events WHERE kind = 'recompile'")
    con.execute("""
        INSERT INTO compile_events BY NAME
        SELECT * FROM split
        UNION ALL
        SELECT * EXCLUDE (reason, details, fallback, in_library), 'torch._dynamo.exc.' || reason AS reason
        FROM compile_events WHERE kind = 'failure'""")
    for table, column in (("compile_events", "details"), ("compile_events", "fallback"),
                          ("compile_events", "in_library"), ("timings", "launched_by"), ("timings", "launch_index"),
                          ("run_rollups", "workload"), ("run_rollups", "failures"), ("run_rollups", "fallbacks"),
                          ("run_rollups", "restarts"), ("run_rollups", "profiler_files")):
        con.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    con.execute("DELETE FROM _migrations WHERE name = '0012_events_once_and_extern_time'")


TALLIES = "SELECT run_id, kind, name, n FROM run_tallies ORDER BY ALL"
EVENTS = "SELECT run_id, compile_id, kind, reason, details, fallback FROM compile_events ORDER BY ALL"


def as_before_0035(con) -> None:
    """Make a warehouse as one written before migration 0035: every graph-break record a
    `graph_break` row (a frame's own data-dependent branch too), in_library in place of origin and
    the causes, no timings.parent, the rollups' library_* columns; the migration not recorded."""
    con.execute("UPDATE compile_events SET kind = 'graph_break' WHERE kind = 'uncounted_break'")
    for column in ("origin", "cause_id", "cause_title"):
        con.execute(f"ALTER TABLE compile_events DROP COLUMN {column}")
    con.execute("ALTER TABLE compile_events ADD COLUMN in_library BOOLEAN")
    con.execute("UPDATE compile_events SET in_library = "
                "regexp_matches(coalesce(user_file, ''), '/(site-packages|torch)/|/lib/python')")
    con.execute("ALTER TABLE timings DROP COLUMN parent")
    con.execute("ALTER TABLE run_rollups DROP COLUMN uncounted_breaks")
    con.execute("ALTER TABLE run_rollups ADD COLUMN library_graph_breaks BIGINT")
    con.execute("ALTER TABLE run_rollups ADD COLUMN library_recompiles BIGINT")
    con.execute("DELETE FROM _migrations WHERE name LIKE '0035_%'")


def as_before(con, number: str) -> None:
    """Make a warehouse as one written before migration `number` too: without the tables and columns
    it adds (read from the migration itself), the migration not recorded."""
    path = next(p for p in migration_files() if p.stem.startswith(f"{number}_"))
    text = path.read_text()
    for table in re.findall(r"^CREATE TABLE (\w+)", text, re.M):
        con.execute(f"DROP TABLE {table}")
    for table, column in re.findall(r"^ALTER TABLE (\w+) ADD COLUMN (\w+)", text, re.M):
        con.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    con.execute("DELETE FROM _migrations WHERE name = ?", [path.stem])


# the later migrations that add columns to a table an older one alters (run_rollups: 0035; runs: 0014):
# a warehouse without the older one has none of them, and applied before its own ADD COLUMN they would
# put the columns out of a new warehouse's order
LATER_ROLLUPS = ["0054", "0059"]

# the warehouses a writer may meet: the migrations each lacks (0012 is issue 26's, 0014 issue 28's,
# 0015 issue 31's, 0034 issue 34's, which alters 0015's table, and 0062, which alters 0014's; a
# branch's warehouse may have a later one and not an earlier one)
OLDER = {"issue 31's, without 0012": ["0012"],
         "issue 28's, without 0012 and 0015": ["0012", "0015", "0034"],
         "before 0012, 0014 and 0015": ["0012", "0014", "0015", "0034", "0062"]}


@pytest.mark.parametrize("older", list(OLDER))
def test_migration_0012_stores_each_failure_and_recompile_once(tmp_path, older):
    """A warehouse written before 0012 (ca 2.14.1: 6 failure rows for 3 failed compiles, 7 recompile
    rows for 4 recompiles) gets the rows a fresh ingest writes, and its rollups made again, whichever
    later migrations it already has: the ones it lacks are applied in order, and a harness CSV it
    holds (0015's table) is kept."""
    from inductor_warehouse.ingest.load import ingest_paths
    from tests.conftest import FIXTURES, unpack_cpu_corpora

    root = unpack_cpu_corpora(tmp_path / "corpora")
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([next(root[2].glob("cpu-torch*")) / "ca", next(root[1].glob("cpu-torch*")) / "dynamic",
                  FIXTURES / "harness" / "cpu-2.14.1-job-accuracy.csv"], db)
    con = connect(db)
    fresh = con.execute(EVENTS).fetchall()
    rollups = con.execute("SELECT * FROM run_rollups ORDER BY run_id").fetchall()
    tallies = con.execute(TALLIES).fetchall()
    harness = con.execute("SELECT * FROM harness_results ORDER BY ALL").fetchall()
    assert len(harness) == 3
    holders = {r[0] for r in con.execute("SELECT run_id FROM harness_holders").fetchall()}
    gb = [d[0] for d in con.execute("SELECT * FROM run_rollups LIMIT 0").description].index("graph_breaks")
    for number in reversed(LATER_ROLLUPS):
        as_before(con, number)
    as_before_0035(con)
    as_before_0012(con)
    for number in reversed(OLDER[older][1:]):
        as_before(con, number)
    counts = dict(con.execute("SELECT kind, count(*) FROM compile_events JOIN runs USING (run_id) "
                              "WHERE model = 'ca' GROUP BY kind").fetchall())
    assert (counts["failure"], counts["recompile"]) == (6, 7)
    con.close()
    con = duckdb.connect(db)
    try:
        applied = migrate(con)  # what a writer's open does
        assert [a[:4] for a in applied] == sorted([*OLDER[older], "0035", *LATER_ROLLUPS])
        assert con.execute("SELECT * FROM harness_results ORDER BY ALL").fetchall() == (
            harness if "0015" not in OLDER[older] else [])
        assert con.execute(EVENTS).fetchall() == fresh
        if "0015" in OLDER[older]:  # the harness rows are gone: so is the harness run's only graph-break count
            rollups = [(*r[:gb], None, *r[gb + 1:]) if r[0] in holders else r for r in rollups]
        assert con.execute("SELECT * FROM run_rollups ORDER BY run_id").fetchall() == rollups
        assert con.execute(TALLIES).fetchall() == tallies  # made again with the rollups, not added twice
        assert con.execute(_TABLES).fetchall() == migrated_tables()
    finally:
        con.close()


def test_migration_0035_counts_breaks_as_dynamo_does(tmp_path):
    """A warehouse written before 0035 (dynamic 2.13: two graph_break rows are the frame's own
    data-dependent branch; ca 2.14.1 plus a record of a frame that fell back to eager, as the old
    parser stored it) gets the kinds, causes and rollups a fresh ingest writes: the skipped frame's
    row gone (its failure stays), the branches uncounted_break, origin where the code lives."""
    from inductor_warehouse.ingest.load import ingest_paths
    from tests.conftest import unpack_cpu_corpora

    root = unpack_cpu_corpora(tmp_path / "corpora")
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([next(root[2].glob("cpu-torch*")) / "ca", next(root[1].glob("cpu-torch*")) / "dynamic"], db)
    con = connect(db)
    fresh = con.execute(EVENTS).fetchall()
    rollups = con.execute("SELECT * FROM run_rollups ORDER BY run_id").fetchall()
    origins = con.execute("SELECT kind, origin, count(*) FROM compile_events GROUP BY ALL ORDER BY ALL").fetchall()
    links = con.execute("SELECT compile_id, cause_id FROM compile_events WHERE reason LIKE '%/gb/gb%' ORDER BY ALL").fetchall()
    for number in reversed(LATER_ROLLUPS):
        as_before(con, number)
    as_before_0035(con)
    con.execute("""INSERT INTO compile_events
                       (run_id, compile_id, kind, reason, user_file, user_line, source, run_key, in_library)
                   SELECT run_id, compile_id, 'graph_break',
                          'Graph Break Reason: Failed to handle graph break gracefully. '
                          || 'Skipping the function and falling back to eager.',
                          user_file, user_line, source, run_key, true
                   FROM compile_events WHERE kind = 'failure'""")
    assert con.execute("SELECT count(*) FROM compile_events WHERE kind = 'graph_break'").fetchone()[0] == 2 + 2 + 1 + 3
    con.close()
    con = duckdb.connect(db)
    try:
        assert [a[:4] for a in migrate(con)] == ["0035", *LATER_ROLLUPS]
        assert con.execute(EVENTS).fetchall() == fresh
        assert con.execute("SELECT * FROM run_rollups ORDER BY run_id").fetchall() == rollups
        assert con.execute("SELECT kind, origin, count(*) FROM compile_events GROUP BY ALL ORDER BY ALL").fetchall() == origins
        assert con.execute("SELECT compile_id, cause_id FROM compile_events WHERE reason LIKE '%/gb/gb%' "
                           "ORDER BY ALL").fetchall() == links
    finally:
        con.close()


def test_migration_0050_gives_restarts_their_break_s_registry_id(tmp_path):
    """A warehouse written before 0050 kept no cause on restart rows: the migration takes the registry
    id from the link in the restart's message (the break that restarted the analysis), as a fresh
    ingest gives it, and leaves restarts without a link as they were."""
    from inductor_warehouse.ingest.load import ingest_paths
    from tests.conftest import unpack_cpu_corpora

    root = unpack_cpu_corpora(tmp_path / "corpora")
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([next(root[2].glob("cpu-torch*")) / "ca", next(root[1].glob("cpu-torch*")) / "dynamic"], db)
    restarts = "SELECT compile_id, reason, cause_id FROM compile_events WHERE kind = 'restart' ORDER BY ALL"
    con = connect(db)
    fresh = con.execute(restarts).fetchall()
    linked = [r for r in fresh if "/gb/gb" in (r[1] or "")]
    assert linked and all(r[2] == re.search(r"/gb/(gb\d+)\.html", r[1]).group(1) for r in linked)
    con.execute("UPDATE compile_events SET cause_id = NULL, cause_title = NULL WHERE kind = 'restart'")
    con.execute("DELETE FROM _migrations WHERE name LIKE '0050_%'")
    con.close()
    con = duckdb.connect(db)
    try:
        assert [a[:4] for a in migrate(con)] == ["0050"]
        after = con.execute(restarts).fetchall()
        assert [r for r in after if "/gb/gb" in (r[1] or "")] == linked
        assert all(r[2] is None for r in after if "/gb/gb" not in (r[1] or ""))
    finally:
        con.close()
