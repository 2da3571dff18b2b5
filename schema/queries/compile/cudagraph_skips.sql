-- cudagraphs per run: graphs recorded, re-recorded, and skipped with Inductor's reason
-- One row per run that used cudagraphs or skipped them (mode="reduce-overhead", cudagraph trees):
-- recordings (CUDAGraphNode.record spans of the trace), re-recordings and skips (TORCH_LOGS
-- cudagraphs, compilation metrics' cudagraph_skip_reason), the distinct skip reasons. A run that
-- skips cudagraphs where another release of the same workload did not runs those graphs without them.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only runs of this compiler version (prefix)
SELECT
    r.model,
    r.compiler_version,
    r.device,
    CAST(sum(c.n) FILTER (WHERE c.kind = 'record') AS BIGINT)   AS recordings,
    CAST(sum(c.n) FILTER (WHERE c.kind = 'rerecord') AS BIGINT) AS rerecordings,
    CAST(sum(c.n) FILTER (WHERE c.kind = 'skip') AS BIGINT)     AS skips,
    string_agg(DISTINCT c.reason, '; ' ORDER BY c.reason) FILTER (WHERE c.kind = 'skip') AS skip_reasons,
    r.run_id
FROM cudagraph_events c
JOIN runs r USING (run_id)
WHERE ($model IS NULL OR r.model = $model)
  AND ($compiler IS NULL OR starts_with(r.compiler_version, $compiler))
GROUP BY r.model, r.compiler_version, r.device, r.run_id
ORDER BY r.model, r.compiler_version, r.run_id;
