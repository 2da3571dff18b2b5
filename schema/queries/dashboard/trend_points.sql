-- Trend points: one row per run with its workload, fusion rate, kernels, compile events and compile time
-- @internal used by the dashboards' pages
-- fusion_rate, kernels and the compile events as in views/20_run_metrics.sql (NULL where the run's files
-- never said them: no point of the chart, never a 0; graph_breaks and recompiles as Dynamo counts them,
-- every frame's; uncounted_breaks apart); compile_s is total_s of the
-- view run_compile_time. A trend's series is a workload (views/12_workloads.sql).
-- `version_rank` orders versions as releases.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
-- @param limit INTEGER default=5000 at most this many runs (newest first)
WITH picked AS (
    SELECT * FROM picked_runs(MAP {'compilers': $compilers, 'models': $models, 'devices': $devices, 'labels': $labels})
)
SELECT
    m.run_id,
    m.model,
    m.workload,
    m.compiler_version,
    dense_rank() OVER (ORDER BY version_key(m.compiler_version), m.compiler_version) AS version_rank,
    m.device,
    m.started_at,
    round(m.fusion_rate, 4)                     AS fusion_rate,
    li.kernels,
    li.extern_calls,
    m.graph_breaks,
    m.uncounted_breaks,
    m.recompiles,
    li.failures,
    m.fallbacks,
    round(c.total_s, 3)                         AS compile_s
FROM run_metrics m
JOIN picked p USING (run_id)
JOIN run_listing li USING (run_id)  -- kernels NULL where the run holds nothing they are read from
LEFT JOIN run_compile_time c USING (run_id)
ORDER BY m.started_at DESC NULLS LAST, m.model, m.workload, m.compiler_version, m.run_id
LIMIT $limit;
