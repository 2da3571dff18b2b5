"""run_rollups, run_tallies and run_phases: a run's rows summed as the loader writes them
(schema/views/15_run_rollups_of.sql, 62_run_phase_times.sql), and made again for the runs a
migration left without them.

A migration that changes what a rollup holds drops the rollups it changes (0012, 0015, 0016); the
store's own migration (`store/migrate.py`) makes them again before anyone writes or reads them, so
a migrated warehouse is whole whoever opened it.
"""

from __future__ import annotations

import duckdb

from inductor_warehouse.store.connection import one_row, transaction


def fill_rollups(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> None:
    """Sum the runs' rows into run_rollups, run_tallies and run_phases, with the run's key as every
    row of a run carries it, and keep their inductor configs once; inside the caller's transaction."""
    con.execute("INSERT INTO run_rollups BY NAME SELECT u.*, r.run_key FROM run_rollups_of(?) u "
                "JOIN runs r USING (run_id)", [run_ids])
    con.execute("INSERT INTO run_tallies BY NAME SELECT t.*, r.run_key FROM run_tallies_of(?) t "
                "JOIN runs r USING (run_id)", [run_ids])
    con.execute("INSERT INTO run_phases BY NAME SELECT * FROM run_phases_of(?)", [run_ids])
    con.execute("INSERT INTO inductor_configs SELECT config_hash, any_value(text) FROM run_configs_of(?) "
                "WHERE config_hash NOT IN (SELECT config_hash FROM inductor_configs) GROUP BY config_hash",
                [run_ids])


def fill_harness_workloads(con: duckdb.DuckDBPyConnection, keys: tuple[int, int] | None = None) -> None:
    """Each benchmark harness row's workload (views/61_harness.sql: harness_row_workload), kept with
    it: for the runs of keys first..last (a batch's), or for every row without one (rows written
    before migration 0034); inside the caller's transaction."""
    where = "h.run_key BETWEEN ? AND ?" if keys else "h.workload IS NULL"
    con.execute(f"""UPDATE harness_results h
                    SET workload = harness_row_workload(h.model, coalesce(h.device, r.device),
                                                        coalesce(h.mode, r.labels ->> 'mode'),
                                                        coalesce(h.dtype, r.labels ->> 'dtype'), r.labels)
                    FROM runs r WHERE r.run_id = h.run_id AND {where}""", list(keys or ()))


def fill_harness_points(con: duckdb.DuckDBPyConnection, touched: list[str] | None = None) -> None:
    """HUD's records and suite numbers kept for each point of harness_point_keys() (harness_records,
    harness_point_summaries, harness_point_runs: views/61_harness.sql), made again for the points
    whose harness rows the `touched` runs hold or measured (written, or replaced: the kept points
    name them), or for every point (None); inside the caller's transaction."""
    if touched is not None and not one_row(con, """
            SELECT EXISTS (FROM harness_results WHERE kind IN ('performance', 'accuracy'))
                OR EXISTS (FROM harness_point_runs WHERE run_id IN (SELECT unnest(?)))""", [touched])[0]:
        return  # no point can name these runs: each one's query below (planned per key) would find none
    for (key,) in con.execute("SELECT unnest(harness_point_keys())").fetchall():
        points = None if touched is None else [p for (p,) in con.execute("""
            SELECT DISTINCT harness_point($key, h.compiler_version, r.labels ->> $key, harness_set_point(r.labels, r.run_id)) AS p
            FROM harness_rows h JOIN runs r USING (run_id)
            WHERE h.kind IN ('performance', 'accuracy')
              AND (h.run_id IN (SELECT unnest($touched)) OR h.linked_run_id IN (SELECT unnest($touched)))
            UNION
            SELECT point FROM harness_point_runs
            WHERE point_key = $key AND run_id IN (SELECT unnest($touched))""", {"key": key, "touched": touched}).fetchall()
            if p is not None]
        if points == []:
            continue
        for table in ("harness_records", "harness_point_summaries", "harness_point_runs"):
            con.execute(f"DELETE FROM {table} WHERE point_key = $key AND ($points IS NULL "
                        "OR list_contains($points, point))", {"key": key, "points": points})
        con.execute("INSERT INTO harness_records BY NAME SELECT ? AS point_key, * FROM harness_models_of(?, NULL, ?, NULL)",
                    [key, key, points])
        con.execute("INSERT INTO harness_point_summaries BY NAME SELECT ? AS point_key, * "
                    "FROM harness_summary_of(?, NULL, ?, NULL)", [key, key, points])
        con.execute("""INSERT INTO harness_point_runs
                       SELECT DISTINCT point_key, point, unnest(run_ids) FROM harness_records
                       WHERE point_key = $key AND ($points IS NULL OR list_contains($points, point))""",
                    {"key": key, "points": points})


# runs whose rollups one transaction makes again: all of a large warehouse's at once would hold
# the sums of every fact table in memory (CHANGELOG, issue 38, says how much)
REFILL_RUNS = 5_000


def fill_missing(con: duckdb.DuckDBPyConnection) -> None:
    """Rollups for every run without one, REFILL_RUNS runs a transaction, in run key order; and the
    workload of every harness row without one, and HUD's kept points where none are kept."""
    missing = [r for (r,) in con.execute(
        "SELECT run_id FROM runs WHERE run_id NOT IN (SELECT run_id FROM run_rollups) ORDER BY run_key").fetchall()]
    for i in range(0, len(missing), REFILL_RUNS):
        part = missing[i:i + REFILL_RUNS]
        with transaction(con):
            # a migration that drops rollups to have them made again leaves the runs' tallies and phases
            con.execute("DELETE FROM run_tallies WHERE run_id IN (SELECT unnest(?))", [part])
            con.execute("DELETE FROM run_phases WHERE run_id IN (SELECT unnest(?))", [part])
            fill_rollups(con, part)
    if one_row(con, "SELECT count(*) FROM harness_results WHERE workload IS NULL")[0]:
        with transaction(con):
            fill_harness_workloads(con)
    kept, unnamed = one_row(con, "SELECT count(*), count(*) FILTER (WHERE point IS NULL) FROM harness_records")
    # none kept: a warehouse written before migration 0034; a point without a name: kept before two
    # result sets of unknown release were points of their own (views/61_harness.sql: harness_point)
    if unnamed or (not kept and one_row(
            con, "SELECT count(*) FROM harness_results WHERE kind IN ('performance', 'accuracy')")[0]):
        with transaction(con):
            fill_harness_points(con)
