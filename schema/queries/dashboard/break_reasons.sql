-- Graph breaks, recompiles, restarts and failures: causes ranked across runs
-- @internal used by the dashboards' pages
-- Grouped by cause (views/31_compile_event_reasons.sql: Dynamo's registry id, else the normalised
-- reason) and frame kind (user or library code); `reason` is the normalised reason, one of the
-- group's where a registry id groups several wordings.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
-- @param kind VARCHAR default=graph_break graph_break, recompile, restart or failure
-- @param limit INTEGER default=50 at most this many causes
WITH picked AS (
    SELECT r.* FROM run_workloads r WHERE r.run_id IN (SELECT run_id FROM picked_runs(MAP {'compilers': $compilers,
                                                                                      'models': $models,
                                                                                      'devices': $devices,
                                                                                      'labels': $labels}))
)
SELECT
    e.cause,
    min(e.normalised)                           AS reason,
    CASE WHEN e.in_library THEN 'library' ELSE 'user' END AS frames,
    count(*)                                    AS events,
    count(DISTINCT e.run_id)                    AS runs,
    count(DISTINCT p.workload)                  AS workloads,
    count(DISTINCT p.model)                     AS models,
    string_agg(DISTINCT p.model, ' ' ORDER BY p.model) AS model_list,
    string_agg(DISTINCT p.compiler_version, ' ' ORDER BY p.compiler_version) AS compiler_versions,
    mode(regexp_extract(e.user_file, '[^/]+$') || ':' || e.user_line) AS top_user_frame
FROM compile_event_reasons e
JOIN picked p USING (run_id)
WHERE e.kind = $kind
GROUP BY e.cause, e.in_library
ORDER BY events DESC, cause, frames
LIMIT $limit;
