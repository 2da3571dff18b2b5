"""run_rollups, run_tallies and run_phases: a run's rows summed as the loader writes them
(schema/views/15_run_rollups_of.sql, 62_run_phase_times.sql), and made again for the runs a
migration left without them.

A migration that changes what a rollup holds drops the rollups it changes (0012, 0015, 0016); every
writer that ingest and the CLI open migrates with `migrate` here, which makes them again before
anyone writes or reads them.
"""

from __future__ import annotations

import duckdb

from inductor_warehouse.store.connection import transaction
from inductor_warehouse.store.migrate import migrate as migrate_schema


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


# runs whose rollups one transaction makes again: all of a large warehouse's at once would hold
# the sums of every fact table in memory (4.2 GB at 100,000 runs)
REFILL_RUNS = 5_000


def fill_missing(con: duckdb.DuckDBPyConnection) -> None:
    """Rollups for every run without one, REFILL_RUNS runs a transaction, in run key order."""
    missing = [r for (r,) in con.execute(
        "SELECT run_id FROM runs WHERE run_id NOT IN (SELECT run_id FROM run_rollups) ORDER BY run_key").fetchall()]
    for i in range(0, len(missing), REFILL_RUNS):
        part = missing[i:i + REFILL_RUNS]
        with transaction(con):
            # a migration that drops rollups to have them made again leaves the runs' tallies and phases
            con.execute("DELETE FROM run_tallies WHERE run_id IN (SELECT unnest(?))", [part])
            con.execute("DELETE FROM run_phases WHERE run_id IN (SELECT unnest(?))", [part])
            fill_rollups(con, part)


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The store's migrations, then the rollups they dropped made again; the migrations applied."""
    applied = migrate_schema(con)
    fill_missing(con)
    return applied
