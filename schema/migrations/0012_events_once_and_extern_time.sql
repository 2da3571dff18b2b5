-- Each graph break, recompile and failure stored once, with what tells them apart; extern kernels'
-- profiled time; the per-run sums of both.
--
-- compile_events:
--   details     a recompile's failed guards, one per cached entry of the frame (raw text): one
--               `recompile_reasons` artifact (or TORCH_LOGS message) is one recompile, however many
--               guards it lists; reason = them joined by newlines
--   fallback    a failure after which the frame ran eagerly: Dynamo's soft failures (Unsupported,
--               UserError) or any failure with errors suppressed
--   in_library  the compiled frame's code (else the event's user frame) lies in torch, an installed
--               package or the standard library
-- The rows of warehouses written before are made so here: a trace's recompile rows of one compile id
-- become one; a failure a trace reported twice (its `dynamo_error` artifact and its metrics'
-- fail_type) is kept as the metrics say it.
ALTER TABLE compile_events ADD COLUMN details VARCHAR[];
ALTER TABLE compile_events ADD COLUMN fallback BOOLEAN;
ALTER TABLE compile_events ADD COLUMN in_library BOOLEAN;

UPDATE compile_events SET details = string_split(reason, chr(10))
WHERE kind = 'recompile' AND (source <> 'torch_trace' OR compile_id IS NULL);
UPDATE compile_events SET details = g.reasons, reason = array_to_string(g.reasons, chr(10))
FROM (SELECT run_id, compile_id, list(reason ORDER BY rowid) AS reasons, min(rowid) AS first
      FROM compile_events WHERE kind = 'recompile' AND source = 'torch_trace' AND compile_id IS NOT NULL
      GROUP BY ALL) g
WHERE compile_events.rowid = g.first;
DELETE FROM compile_events WHERE kind = 'recompile' AND details IS NULL;

DELETE FROM compile_events
WHERE kind = 'failure' AND source = 'torch_trace' AND EXISTS (
    SELECT 1 FROM compilations c
    WHERE c.run_id = compile_events.run_id AND c.record_kind = 'compilation_metrics'
      AND c.compile_id = regexp_replace(compile_events.compile_id, '_[0-9]+$', '')
      AND c.fail_type IS NOT NULL
      AND compile_events.reason IS DISTINCT FROM c.fail_type || coalesce(': ' || c.fail_reason, ''));

UPDATE compile_events SET fallback = CASE
    WHEN c.record_kind = 'compilation_metrics'
        THEN split_part(c.fail_type, '.', -1) IN ('Unsupported', 'UserError', 'CacheLimitExceeded', 'RecompileLimitExceeded')
             OR coalesce(json_extract(c.record, '$.config_suppress_errors')::VARCHAR = 'true', false)
    ELSE false END
FROM compilations c
WHERE compile_events.kind = 'failure' AND c.run_id = compile_events.run_id
  AND c.compile_id = regexp_replace(compile_events.compile_id, '_[0-9]+$', '') AND c.fail_type IS NOT NULL;
UPDATE compile_events
SET fallback = split_part(split_part(reason, ':', 1), '.', -1) IN ('Unsupported', 'UserError', 'CacheLimitExceeded', 'RecompileLimitExceeded')
WHERE kind = 'failure' AND fallback IS NULL;

UPDATE compile_events SET in_library = regexp_matches(coalesce(f.frame_file, compile_events.user_file, ''),
                                                      '/(site-packages|dist-packages|torch)/|/lib/python')
FROM (SELECT run_id, regexp_replace(compile_id, '/[^/]*$', '') AS frame, min(co_filename) AS frame_file
      FROM compilations WHERE compile_id IS NOT NULL GROUP BY ALL) f
WHERE f.run_id = compile_events.run_id
  AND f.frame = regexp_replace(regexp_replace(compile_events.compile_id, '_[0-9]+$', ''), '/[^/]*$', '');
UPDATE compile_events SET in_library = regexp_matches(coalesce(user_file, ''), '/(site-packages|dist-packages|torch)/|/lib/python')
WHERE in_library IS NULL;

-- timings of kernels the profiler saw launched by a CPU op that the compiled graph called (an extern
-- call: aten::mm, aten::_scaled_dot_product_efficient_attention, ...): that op, and which of the
-- graph's calls of it this is (0, 1, ...), the order of the graph's extern call sites of that op.
-- NULL for Inductor's own kernels and for runs ingested before.
ALTER TABLE timings ADD COLUMN launched_by VARCHAR;
ALTER TABLE timings ADD COLUMN launch_index BIGINT;

-- New per-run sums (views/15_run_rollups_of.sql) and the run's workload, and graph_breaks and recompiles now count user
-- frames only (library_* the rest) and recompiles once each: every rollup is made again by the
-- migration's caller (fill_rollups fills each run without one).
ALTER TABLE run_rollups ADD COLUMN workload VARCHAR;
ALTER TABLE run_rollups ADD COLUMN failures BIGINT;
ALTER TABLE run_rollups ADD COLUMN fallbacks BIGINT;
ALTER TABLE run_rollups ADD COLUMN restarts BIGINT;
ALTER TABLE run_rollups ADD COLUMN profiler_files BIGINT;
DELETE FROM run_rollups;
