-- Compile events of a run: graph breaks, recompiles, restarts and failures, with where they happened
-- @param run_id VARCHAR the run
SELECT
    e.kind,
    e.compile_id,
    e.headline,
    regexp_extract(e.user_file, '[^/]+$') AS user_file,
    e.user_line,
    e.reason,
    e.source
FROM compile_event_reasons e
WHERE e.run_id = $run_id
ORDER BY e.compile_id, e.kind;
