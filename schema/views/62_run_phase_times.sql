-- run_phases_of(ids): a run's compile time per phase: each dynamo_timed span the trace logged as a
-- chromium_event (timings, source chromium_event), summed over the run's compiles. The names are
-- the release's own (about 22 here in 2.6, 60 in 2.13 and 2.14): a phase a release does not time has
-- no row, and spans nest (inductor_compile holds code_gen), so phases are not summed across names;
-- `parent` is the span a phase's spans most often sit in (timings.parent). The loader keeps them in
-- run_phases as it writes a run (ingest/rollups.py, migration 0038).
CREATE OR REPLACE MACRO run_phases_of(ids) AS TABLE
SELECT run_id, run_key, name AS phase, sum(duration_us) / 1e6 AS seconds, sum(calls)::BIGINT AS spans,
       count(DISTINCT compile_id)::BIGINT AS compiles, mode(parent ORDER BY parent) AS parent
FROM timings
WHERE source = 'chromium_event' AND kind = 'compile'
  AND run_key IN (SELECT run_key FROM runs WHERE run_id IN (SELECT unnest(ids)))
GROUP BY run_id, run_key, name;

-- run_phase_times: run_phases as queries read it, one row per run and phase
CREATE OR REPLACE VIEW run_phase_times AS
SELECT run_id, phase, seconds, spans, compiles, parent FROM run_phases;
