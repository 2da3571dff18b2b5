-- run_phase_times: a run's compile time per phase: each dynamo_timed span the trace logged as a
-- chromium_event (timings, source chromium_event), summed over the run's compiles. The names are
-- the release's own (about 22 here in 2.6, 60 in 2.13 and 2.14): a phase a release does not time has
-- no row, and spans nest (inductor_compile holds code_gen), so phases are not summed across names;
-- `parent` is the span a phase's spans most often sit in (timings.parent).
CREATE OR REPLACE VIEW run_phase_times AS
SELECT run_id, name AS phase, sum(duration_us) / 1e6 AS seconds, sum(calls)::BIGINT AS spans,
       count(DISTINCT compile_id)::BIGINT AS compiles, mode(parent) AS parent
FROM timings
WHERE source = 'chromium_event' AND kind = 'compile'
GROUP BY run_id, name;
