-- Compile events of a run: graph breaks, recompiles, restarts and failures, with where they happened
-- @internal used by the Run explorer page
-- `origin`: where it happened (compile_events.origin: model, package, torch or stdlib); `ran_eagerly`: a failure after which the
-- frame ran eagerly; `failed_guards`: a recompile's guards that failed, one per cached entry. The
-- unknown_* rows, which say why a count is unknown, are not events: explore/unknown_counts shows them.
-- @param run_id VARCHAR the run
SELECT
    e.kind,
    e.compile_id,
    e.cause,
    e.headline,
    e.origin,
    e.fallback                             AS ran_eagerly,
    len(e.details)                         AS failed_guards,
    regexp_extract(e.user_file, '[^/]+$') AS user_file,
    e.user_line,
    e.reason,
    e.source
FROM compile_event_reasons e
WHERE e.run_id = $run_id AND e.kind NOT LIKE 'unknown\_%' ESCAPE '\'
ORDER BY e.compile_id, e.kind, e.source, e.user_file, e.user_line, e.cause, e.reason;
