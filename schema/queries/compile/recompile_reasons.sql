-- Recompiles: top causes (the guard that failed), across runs
-- A recompile counts once however many cached entries' guards failed (their texts are in
-- compile_events.details); its cause is the first failed guard, normalised
-- (views/31_compile_event_reasons.sql: object ids, addresses, literal values and the id of the
-- cache entry replaced), so one cause groups across runs. `library_recompiles` are those of library frames.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only this compiler version
-- @param limit INTEGER default=20 at most this many causes
SELECT
    e.cause                                    AS reason,
    count(*)                                   AS recompiles,
    count(*) FILTER (WHERE e.in_library)       AS library_recompiles,
    sum(len(e.details))::BIGINT                AS failed_guards,
    count(DISTINCT e.run_id)                   AS runs,
    count(DISTINCT r.workload)                 AS workloads,
    count(DISTINCT r.model)                    AS models,
    string_agg(DISTINCT r.model, ' ' ORDER BY r.model) AS model_list,
    min(e.headline)                            AS example
FROM compile_event_reasons e
JOIN run_workloads r USING (run_id)
WHERE e.kind = 'recompile'
  AND r.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model, 'compilers': $compiler}))
GROUP BY e.cause
ORDER BY recompiles DESC, reason
LIMIT $limit;
