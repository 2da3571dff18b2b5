-- Graph breaks, recompiles, restarts and failures: causes ranked across runs
-- @internal used by the dashboards' pages
-- Grouped by cause (views/31_compile_event_reasons.sql: Dynamo's registry id, pre-registry messages
-- mapped onto it, a recompile's guard kind, else the normalised reason); `reason` is the registry's
-- title of the cause (else one normalised reason of the group). `in_model` .. `in_stdlib`: where
-- they happened (compile_events.origin); every one counts.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
-- @param kind VARCHAR default=graph_break graph_break, uncounted_break, recompile, restart or failure
-- @param origin VARCHAR only events whose code lives there: model, package, torch or stdlib
-- @param limit INTEGER default=50 at most this many causes
WITH picked AS (
    SELECT r.* FROM run_workloads r WHERE r.run_id IN (SELECT run_id FROM picked_runs(MAP {'compilers': $compilers,
                                                                                      'models': $models,
                                                                                      'devices': $devices,
                                                                                      'labels': $labels}))
)
SELECT
    e.cause,
    min(e.cause_title)                          AS reason,
    count(*)                                    AS events,
    count(*) FILTER (WHERE e.origin = 'model')   AS in_model,
    count(*) FILTER (WHERE e.origin = 'package') AS in_packages,
    count(*) FILTER (WHERE e.origin = 'torch')   AS in_torch,
    count(*) FILTER (WHERE e.origin = 'stdlib')  AS in_stdlib,
    count(DISTINCT e.run_id)                    AS runs,
    count(DISTINCT p.workload)                  AS workloads,
    count(DISTINCT p.model)                     AS models,
    string_agg(DISTINCT p.model, ' ' ORDER BY p.model) AS model_list,
    string_agg(DISTINCT p.compiler_version, ' ' ORDER BY p.compiler_version) AS compiler_versions,
    mode(regexp_extract(e.user_file, '[^/]+$') || ':' || e.user_line) AS top_user_frame
FROM compile_event_reasons e
JOIN picked p USING (run_id)
WHERE e.kind = $kind AND ($origin IS NULL OR e.origin = $origin)
GROUP BY e.cause
ORDER BY events DESC, cause
LIMIT $limit;
