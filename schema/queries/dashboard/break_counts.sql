-- Compile events per kind: graph breaks, recompiles, restarts, failures, in user and library frames
-- @internal used by the dashboards' pages
-- One row per kind (views/20_run_metrics.sql's definitions: a recompile once however many guards
-- failed; library frames: torch, packages, the standard library), with how many ran eagerly after
-- (failures) and in how many runs, workloads and models.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
WITH picked AS (
    SELECT r.* FROM run_workloads r WHERE r.run_id IN (SELECT run_id FROM picked_runs(MAP {'compilers': $compilers,
                                                                                      'models': $models,
                                                                                      'devices': $devices,
                                                                                      'labels': $labels}))
)
SELECT
    e.kind,
    count(*)                                    AS events,
    count(*) FILTER (WHERE NOT coalesce(e.in_library, false)) AS user_frames,
    count(*) FILTER (WHERE e.in_library)        AS library_frames,
    count(*) FILTER (WHERE e.fallback)          AS ran_eagerly,
    count(DISTINCT e.run_id)                    AS runs,
    count(DISTINCT p.workload)                  AS workloads,
    count(DISTINCT p.model)                     AS models
FROM compile_events e
JOIN picked p USING (run_id)
GROUP BY ALL
ORDER BY events DESC;
