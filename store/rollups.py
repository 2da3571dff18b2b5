"""run_rollups and run_tallies: a run's rows summed as the loader writes them (schema/views/
15_run_rollups_of.sql), and made again for the runs a migration left without them.

A migration that changes what a rollup holds drops the rollups it changes (0012, 0015, 0016); the
store's own migration (`store/migrate.py`) makes them again before anyone writes or reads them, so
a migrated warehouse is whole whoever opened it.
"""

from __future__ import annotations

import duckdb

from inductor_warehouse.store.connection import transaction


def fill_rollups(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> None:
    """Sum the runs' rows into run_rollups and run_tallies, with the run's key as every row of a run
    carries it, and keep their inductor configs once; inside the caller's transaction."""
    con.execute("INSERT INTO run_rollups BY NAME SELECT u.*, r.run_key FROM run_rollups_of(?) u "
                "JOIN runs r USING (run_id)", [run_ids])
    con.execute("INSERT INTO run_tallies BY NAME SELECT t.*, r.run_key FROM run_tallies_of(?) t "
                "JOIN runs r USING (run_id)", [run_ids])
    con.execute("INSERT INTO inductor_configs SELECT config_hash, any_value(text) FROM run_configs_of(?) "
                "WHERE config_hash NOT IN (SELECT config_hash FROM inductor_configs) GROUP BY config_hash",
                [run_ids])


def fill_missing(con: duckdb.DuckDBPyConnection) -> None:
    """Rollups for every run without one, in a transaction of their own."""
    missing = [r for (r,) in con.execute(
        "SELECT run_id FROM runs WHERE run_id NOT IN (SELECT run_id FROM run_rollups)").fetchall()]
    if missing:
        with transaction(con):
            # a migration that drops rollups to have them made again leaves the runs' tallies
            con.execute("DELETE FROM run_tallies WHERE run_id IN (SELECT unnest(?))", [missing])
            fill_rollups(con, missing)

