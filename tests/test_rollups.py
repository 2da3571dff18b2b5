"""run_rollups: one row a run, written by the loader with the run, equal to the sums of the run's
own rows; a warehouse without them gets them when a writer opens it."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, GPU_TRAIN_RUN, reader

RUNS = [FIXTURES / "runs" / "cpu-torch2.13" / "transformer", GPU_TRAIN_RUN]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("rollups") / "wh.duckdb")
    assert ingest_paths(RUNS, path).runs == 2
    return path


def _rollups(con) -> list[tuple]:
    return con.execute("SELECT * EXCLUDE (run_key) FROM run_rollups ORDER BY run_id").fetchall()  # a new key each write


def test_a_runs_rollup_is_the_sum_of_its_rows(db):
    con = reader(db)
    try:
        assert con.execute("SELECT count(*), count(DISTINCT run_id) FROM run_rollups").fetchone() == (2, 2)
        # the loader sums a batch as it writes it; summed again once every run is in: equal
        cols = ", ".join(c for (c,) in con.execute("SELECT column_name FROM information_schema.columns "
                                                    "WHERE table_name = 'run_rollups' AND column_name != 'run_key' "
                                                    "ORDER BY ordinal_position").fetchall())
        again = con.execute(f"SELECT {cols} FROM run_rollups_of((SELECT list(run_id) FROM runs)) ORDER BY run_id").fetchall()
        assert con.execute(f"SELECT {cols} FROM run_rollups ORDER BY run_id").fetchall() == again
        # counted here from the fact tables, one figure at a time
        for run_id, graphs, kernels, extern_calls, breaks, kernel_us, total_s in con.execute(
                "SELECT run_id, graphs, kernel_count, extern_calls, graph_breaks, kernel_us, total_s FROM run_rollups"
        ).fetchall():
            one = lambda sql, run_id=run_id: con.execute(sql, [run_id]).fetchone()[0]  # noqa: E731
            assert graphs == one("SELECT count(*) FROM graphs WHERE run_id = ?")
            assert kernels == one("SELECT sum(kernel_count) FROM graphs WHERE run_id = ?")
            assert kernels == one("SELECT count(*) FROM kernels WHERE generated AND run_id = ?") > 0
            assert extern_calls == one("SELECT count(*) FROM kernels WHERE NOT generated AND run_id = ?")
            assert breaks == one("SELECT count(*) FROM compile_events WHERE kind = 'graph_break' AND run_id = ?")
            assert kernel_us == pytest.approx(one(
                "SELECT sum(duration_us) FROM timings WHERE kind = 'kernel' AND source = 'profiler' AND run_id = ?"))
            assert total_s == pytest.approx(one(
                "SELECT sum(duration_us) FILTER (WHERE name IN ('dynamo_cumulative_compile_time', "
                "'bwd_backward_cumulative_compile_time')) / 1e6 FROM timings WHERE kind = 'compile' "
                "AND source = 'compilation_metrics' AND run_id = ?"))
        profiled = con.execute("SELECT count(*) FROM run_rollups WHERE kernel_us > 0").fetchone()[0]
        assert profiled == 1  # the GPU training run was profiled, the CPU run not
    finally:
        con.close()


def test_an_ingest_again_replaces_the_rollup(db, tmp_path):
    copy = str(tmp_path / "wh.duckdb")
    shutil.copyfile(db, copy)
    with duckdb.connect(copy, read_only=True) as con:
        before = _rollups(con)
    assert ingest_paths(RUNS[:1], copy, force=True).runs == 1
    with duckdb.connect(copy, read_only=True) as con:
        assert _rollups(con) == before


def test_a_warehouse_without_rollups_gets_them_from_a_writer(db, tmp_path):
    copy = str(tmp_path / "wh.duckdb")
    shutil.copyfile(db, copy)
    with duckdb.connect(copy) as con:
        before = _rollups(con)
        con.execute("DELETE FROM run_rollups")  # as a warehouse written before migration 0010
    ingest_paths([], copy)  # the loader's writer: it makes them again
    with duckdb.connect(copy, read_only=True) as con:
        assert _rollups(con) == before


def test_iwh_copy_makes_them_again_on_the_warehouse_it_migrates(db, tmp_path):
    """`iwh copy` into a warehouse that holds runs is refused, but its writer has migrated it first,
    as every command's writer does: the rollups a migration dropped are there again."""
    from click.testing import CliRunner

    from inductor_warehouse.cli.main import cli

    dest = str(tmp_path / "dest.duckdb")
    shutil.copyfile(db, dest)
    with duckdb.connect(dest) as con:
        before = _rollups(con)
        con.execute("DELETE FROM run_rollups")
    done = CliRunner().invoke(cli, ["--db", db, "copy", dest])
    assert done.exit_code != 0 and "already holds 2 runs" in done.output
    with duckdb.connect(dest, read_only=True) as con:
        assert _rollups(con) == before


def test_a_warehouse_of_the_batch_macros_drops_them_and_sums_by_run_key(db, tmp_path):
    """Before the rollups were summed by run key, the loader summed a batch's own Arrow tables
    through *_in macros. A writer of this version drops them, and its rollups equal the old ones."""
    copy = str(tmp_path / "wh.duckdb")
    shutil.copyfile(db, copy)
    with duckdb.connect(copy) as con:
        before = _rollups(con)
        con.execute("CREATE MACRO run_rollups_in(ids, graphs_t) AS TABLE SELECT * FROM query_table(graphs_t)")
        con.execute("UPDATE _views SET digest = 'the views of an older release'")
        con.execute("DELETE FROM run_rollups")
    ingest_paths([], copy)  # the loader's writer: it makes them again
    with duckdb.connect(copy, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = 'run_rollups_in'"
                           ).fetchone()[0] == 0
        assert _rollups(con) == before


def test_a_runs_config_is_kept_once_by_hash(db, tmp_path):
    con = reader(db)
    try:
        got = con.execute("""SELECT u.run_id, c.text FROM run_rollups u
                             LEFT JOIN inductor_configs c ON c.config_hash = u.inductor_config_hash ORDER BY 1""").fetchall()
        want = con.execute("""SELECT r.run_id, min(c.inductor_config) FROM runs r LEFT JOIN compilations c USING (run_id)
                              GROUP BY 1 ORDER BY 1""").fetchall()
        assert got == want and any(text for _, text in got)
        assert con.execute("SELECT count(*) FROM inductor_configs").fetchone()[0] == len({t for _, t in want if t})
    finally:
        con.close()


@pytest.mark.parametrize("limit", [1, 3, 40])
def test_slowest_kernels_equal_a_plain_sort(db, limit):
    """The query reads only runs whose slowest kernel can be in the answer (a floor from the
    rollups, with 1 profiled run active at limit 1 only); a plain sort of every kernel agrees (a
    kernel's time per compile id and phase, summed over the calls of the extern op that launched it)."""
    from inductor_warehouse.store.api import Warehouse

    with Warehouse(db) as wh:
        got = wh.query("profile/slowest_kernels", limit=limit).select("run_id", "kernel_name", "total_us").rows()
        want = wh.con.execute("""
            SELECT run_id, name, round(us, 3) FROM (
                SELECT run_id, compile_id, phase, name, sum(duration_us) AS us FROM timings
                WHERE kind = 'kernel' AND source = 'profiler' GROUP BY ALL) t
            JOIN runs r USING (run_id)
            ORDER BY us DESC, r.model, r.compiler_version, run_id, compile_id, phase, name LIMIT ?""", [limit]).fetchall()
    assert got == want and len(got) == min(limit, len(want))


def test_any_writer_of_the_store_leaves_them_whole(db, tmp_path):
    """No caller passes a hook for it: a bare store Writer, and a connection opened for writing,
    migrate a warehouse whose rollups a migration dropped and sum them again."""
    from inductor_warehouse.store.opening import connect
    from inductor_warehouse.store.writer import Writer

    def without_rollups(name: str) -> tuple[str, list[tuple]]:
        copy = str(tmp_path / name)
        shutil.copyfile(db, copy)
        with duckdb.connect(copy) as con:
            before = _rollups(con)
            con.execute("DELETE FROM run_rollups")
        return copy, before

    path, before = without_rollups("writer.duckdb")
    with Writer(path) as writer, writer.session() as con:
        assert _rollups(con) == before
    path, before = without_rollups("connect.duckdb")
    con = connect(path)
    try:
        assert _rollups(con) == before
    finally:
        con.close()


def _phases(con) -> list[tuple]:
    return con.execute("SELECT * EXCLUDE (run_key) FROM run_phases ORDER BY run_id, phase").fetchall()


def test_a_runs_phases_are_its_chromium_spans_summed(db):
    """run_phases (migration 0038): per run and phase, the chromium_event compile spans' seconds,
    counts and compile ids, counted here from the timings."""
    con = reader(db)
    try:
        got = {(r, p): (s, n, c) for r, p, s, n, c in con.execute(
            "SELECT run_id, phase, seconds, spans, compiles FROM run_phases").fetchall()}
        want = {}
        for run_id, name, us, calls, cid in con.execute(
                "SELECT run_id, name, duration_us, calls, compile_id FROM timings "
                "WHERE source = 'chromium_event' AND kind = 'compile'").fetchall():
            s, n, cids = want.get((run_id, name), (0.0, 0, set()))
            want[(run_id, name)] = (s + us / 1e6, n + calls, cids | {cid} - {None})
        assert len(got) == len(want) > 40
        for key, (s, n, cids) in want.items():
            assert got[key][0] == pytest.approx(s) and got[key][1:] == (n, len(cids)), key
        assert con.execute("SELECT count(*) FROM run_phases p JOIN runs r USING (run_id) "
                           "WHERE p.run_key IS DISTINCT FROM r.run_key").fetchone()[0] == 0
    finally:
        con.close()


def test_a_warehouse_before_0038_gets_its_phases_from_a_writer(db, tmp_path):
    copy = str(tmp_path / "wh.duckdb")
    shutil.copyfile(db, copy)
    with duckdb.connect(copy) as con:
        phases, rollups = _phases(con), _rollups(con)
        assert phases
        con.execute("DROP TABLE run_phases")  # as a warehouse written before migration 0038
        con.execute("DELETE FROM _migrations WHERE name = '0038_phase_rollups'")
    ingest_paths([], copy)  # the loader's writer: migrates, and makes the rollups again
    with duckdb.connect(copy, read_only=True) as con:
        assert _phases(con) == phases and _rollups(con) == rollups


def test_rollups_are_made_again_a_part_at_a_time(db, tmp_path, monkeypatch):
    from inductor_warehouse.store import rollups

    copy = str(tmp_path / "wh.duckdb")
    shutil.copyfile(db, copy)
    with duckdb.connect(copy) as con:
        before = _rollups(con), _phases(con)
        con.execute("DELETE FROM run_rollups")
    monkeypatch.setattr(rollups, "REFILL_RUNS", 1)
    ingest_paths([], copy)
    with duckdb.connect(copy, read_only=True) as con:
        assert (_rollups(con), _phases(con)) == before



def test_phase_series_pages_by_workload(db):
    """A page holds whole workloads, in order of model and workload; the pages together are the
    query over every workload (compile/phase_changes pages so too: tests/test_queries_golden.py)."""
    from inductor_warehouse.store.api import Warehouse

    with Warehouse(db) as wh:
        every = wh.query("compile/phase_series", workloads=None).to_dicts()
        pages = [wh.query("compile/phase_series", workloads=1, offset=i).to_dicts() for i in range(3)]
    workloads = sorted({(r["model"], r["workload"]) for r in every})
    assert len(workloads) == 2 and pages[2] == []
    for i, page in enumerate(pages[:2]):
        assert {(r["model"], r["workload"]) for r in page} == {workloads[i]}
    assert pages[0] + pages[1] == every
