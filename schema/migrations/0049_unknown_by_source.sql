-- A count no file of the run gives is NULL, never 0 (views/15_run_rollups_of.sql): graph breaks and
-- recompiles are told by a trace log, or by TORCH_LOGS whose logger was on; restarts and failures by
-- a trace log alone; a profile, a debug tree or torch-spyre files alone tell none. Two facts the
-- ingest now writes as rows are added for runs written before, from their release:
-- - a trace log of a release before 2.5 writes no recompile record (unknown_recompile);
-- - TORCH_LOGS of a release before 2.6 log no data-dependent branch (unknown_uncounted), where no
--   trace log tells them.
-- Every rollup is made again by the migration's caller.
INSERT INTO compile_events (run_id, compile_id, kind, reason, source, run_key)
SELECT r.run_id, NULL, 'unknown_recompile',
       'a TORCH_TRACE log of torch ' || r.compiler_version || ' writes no record of a recompile (recompile_reasons: 2.5)',
       'torch_trace', r.run_key
FROM runs r
WHERE TRY_CAST(split_part(r.compiler_version, '.', 1) AS INTEGER) = 2
  AND TRY_CAST(split_part(r.compiler_version, '.', 2) AS INTEGER) < 5
  AND r.run_key IN (SELECT run_key FROM artifacts WHERE kind = 'torch_trace')
  AND r.run_key NOT IN (SELECT run_key FROM compile_events WHERE kind = 'unknown_recompile');

INSERT INTO compile_events (run_id, compile_id, kind, reason, source, run_key)
SELECT r.run_id, NULL, 'unknown_uncounted',
       'PyTorch before 2.6 logs no data-dependent branch: its uncounted breaks are not in the log', 'torch_logs', r.run_key
FROM runs r
WHERE TRY_CAST(split_part(r.compiler_version, '.', 1) AS INTEGER) = 2
  AND TRY_CAST(split_part(r.compiler_version, '.', 2) AS INTEGER) < 6
  AND r.run_key IN (SELECT run_key FROM compile_events WHERE source = 'torch_logs' AND kind = 'graph_break')
  AND r.run_key NOT IN (SELECT run_key FROM artifacts WHERE kind = 'torch_trace')
  AND r.run_key NOT IN (SELECT run_key FROM compile_events WHERE kind = 'unknown_uncounted');

DELETE FROM run_rollups;
