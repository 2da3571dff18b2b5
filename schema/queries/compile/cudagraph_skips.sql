-- cudagraphs per run: graphs recorded, re-recorded, and skipped with Inductor's reason
-- One row per run that used cudagraphs or skipped them (mode="reduce-overhead", cudagraph trees),
-- with its workload (views/12_workloads.sql), ordered so each workload's releases follow each other:
-- recordings (CUDAGraphNode.record spans of the trace), re-recordings and skips (TORCH_LOGS
-- cudagraphs, compilation metrics' cudagraph_skip_reason), the distinct skip reasons. A run that
-- skips cudagraphs where another release of the same workload did not runs those graphs without them.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only runs of this compiler version (prefix)
SELECT
    w.workload,
    w.compiler_version,
    w.device,
    CAST(sum(c.n) FILTER (WHERE c.kind = 'record') AS BIGINT)   AS recordings,
    CAST(sum(c.n) FILTER (WHERE c.kind = 'rerecord') AS BIGINT) AS rerecordings,
    CAST(sum(c.n) FILTER (WHERE c.kind = 'skip') AS BIGINT)     AS skips,
    string_agg(DISTINCT c.reason, '; ' ORDER BY c.reason) FILTER (WHERE c.kind = 'skip') AS skip_reasons,
    w.model,
    w.run_id
FROM cudagraph_events c
JOIN run_workloads w USING (run_id)
WHERE w.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model, 'compilers': $compiler}))
GROUP BY w.workload, w.compiler_version, w.device, w.model, w.run_id, w.started_at
ORDER BY w.workload, release_order(w.compiler_version, w.started_at), w.run_id;
