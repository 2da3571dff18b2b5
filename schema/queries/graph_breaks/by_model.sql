-- Graph breaks per model x compiler version by cause, summed over the model's workloads
-- One row per model, version, cause (views/31_compile_event_reasons.sql: Dynamo's registry id, else
-- the normalised reason) and origin (where the break happened: model, package, torch or stdlib;
-- compile_events.origin); graph breaks as Dynamo counts them. `workloads` and `runs` say how many the
-- breaks are summed over. Models without graph breaks are absent.
-- @param model VARCHAR only this model
SELECT
    r.model,
    r.compiler_version,
    e.cause,
    min(e.cause_title)                         AS reason,
    e.origin,
    count(*)                                   AS graph_breaks_all_workloads,
    count(DISTINCT r.workload)                 AS workloads,
    count(DISTINCT e.run_id)                   AS runs,
    string_agg(DISTINCT regexp_extract(e.user_file, '[^/]+$') || ':' || e.user_line, ' '
               ORDER BY regexp_extract(e.user_file, '[^/]+$') || ':' || e.user_line) AS user_frames
FROM compile_event_reasons e
JOIN run_workloads r USING (run_id)
WHERE e.kind = 'graph_break'
  AND r.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model}))
GROUP BY r.model, r.compiler_version, e.cause, e.origin
ORDER BY r.model, version_key(compiler_version), compiler_version, graph_breaks_all_workloads DESC, cause, origin;
