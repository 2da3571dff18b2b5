-- The runs behind one compile-event cause: where it happened and the full reason text
-- @internal used by the dashboards' pages
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
-- @param kind VARCHAR default=graph_break graph_break, uncounted_break, recompile, restart or failure
-- @param cause VARCHAR the cause (as in dashboard/break_reasons)
-- @param limit INTEGER default=200 at most this many events
SELECT
    p.model,
    p.workload,
    p.compiler_version,
    e.compile_id,
    e.origin,
    e.user_file,
    e.user_line,
    e.reason,
    e.run_id
FROM compile_event_reasons e
JOIN run_workloads p USING (run_id)
WHERE p.run_id IN (SELECT run_id FROM picked_runs(MAP {'compilers': $compilers, 'models': $models, 'devices': $devices,
                                                        'labels': $labels}))
  AND e.kind = $kind AND e.cause = $cause
ORDER BY version_key(p.compiler_version), p.compiler_version, p.model, p.workload, e.run_id, e.compile_id, e.user_file,
         e.user_line, e.origin, e.reason
LIMIT $limit;
