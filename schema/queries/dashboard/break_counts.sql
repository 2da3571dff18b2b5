-- Compile events per kind: graph breaks, recompiles, restarts, failures, and where they happened
-- @internal used by the dashboards' pages
-- One row per kind (views/20_run_metrics.sql's definitions: a recompile once however many guards
-- failed), every one counted; where they happened (compile_events.origin: the model's own code, an
-- installed package, torch, the standard library), how many ran eagerly after (failures) and in how
-- many runs, workloads and models.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
SELECT
    e.kind,
    count(*)                                    AS events,
    count(*) FILTER (WHERE e.origin = 'model')   AS in_model,
    count(*) FILTER (WHERE e.origin = 'package') AS in_packages,
    count(*) FILTER (WHERE e.origin = 'torch')   AS in_torch,
    count(*) FILTER (WHERE e.origin = 'stdlib')  AS in_stdlib,
    count(*) FILTER (WHERE e.fallback)          AS ran_eagerly,
    count(DISTINCT e.run_id)                    AS runs,
    count(DISTINCT p.workload)                  AS workloads,
    count(DISTINCT p.model)                     AS models
FROM compile_events e
JOIN run_workloads p USING (run_id)
WHERE p.run_id IN (SELECT run_id FROM picked_runs(MAP {'compilers': $compilers, 'models': $models, 'devices': $devices,
                                                        'labels': $labels}))
GROUP BY ALL
ORDER BY events DESC, kind;
