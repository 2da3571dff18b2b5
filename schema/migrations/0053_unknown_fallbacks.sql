-- A hard compile failure (any but Dynamo's soft ones) falls back to eager only where errors were
-- suppressed, which compilation_metrics says from 2.6 on (config_suppress_errors): where its record
-- does not say it (2.3 to 2.5, or a dynamo_error whose metrics never came), whether the frame ran
-- eagerly is unknown (NULL), never "did not", and the run's fallbacks is NULL
-- (views/15_run_rollups_of.sql). A failure of a lazily compiled backward stays no fallback.
-- Restarts are now Dynamo's attempt numbers, a row of no reason for each attempt it named none
-- for: the attempts are not stored, so rows written before gain them when their run is ingested
-- again (`--force`). Every rollup is made again by the migration's caller.
UPDATE compile_events SET fallback = NULL
WHERE kind = 'failure' AND source = 'torch_trace' AND fallback = false
  AND NOT EXISTS (
    SELECT 1 FROM compilations c
    WHERE c.run_id = compile_events.run_id
      AND c.compile_id = regexp_replace(compile_events.compile_id, '_[0-9]+$', '')
      AND c.fail_type IS NOT NULL
      AND (c.record_kind <> 'compilation_metrics' OR json_type(c.record, '$.config_suppress_errors') = 'BOOLEAN'));

DELETE FROM run_rollups;
