-- A run's compile time per phase (run_phases_of in schema/views/62_run_phase_times.sql says how it
-- is summed): written by the loader with the run, in the same transaction, so that the queries of
-- phases across many runs (compile/phase_series, compile/phase_changes) read a row per run and phase
-- instead of every timing row (20 M at 100,000 runs). The runs a warehouse already holds get theirs
-- when it is migrated: their rollups are dropped here and made again by the migration's caller
-- (ingest/rollups.py fill_missing), this table's with them.
CREATE TABLE run_phases (
    run_id   VARCHAR,
    run_key  BIGINT,
    phase    VARCHAR,
    seconds  DOUBLE,
    spans    BIGINT,
    compiles BIGINT,
    parent   VARCHAR  -- the span this phase's spans most often sit in (timings.parent)
);
DELETE FROM run_rollups;
