-- Trend points: one row per run with its fusion rate, kernels, graph breaks, recompiles and compile time
-- fusion_rate and kernels as in views/20_run_metrics.sql; graph breaks and recompiles count
-- compile_events; compile_s is total_s of the view run_compile_time.
-- `version_rank` orders versions as releases.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
-- @param limit INTEGER default=5000 at most this many runs (newest first)
WITH picked AS (
    SELECT * FROM picked_runs($compilers, $models, $devices, $labels)
)
SELECT
    m.run_id,
    m.model,
    m.compiler_version,
    dense_rank() OVER (ORDER BY version_key(m.compiler_version), m.compiler_version) AS version_rank,
    m.device,
    p.labels,
    m.started_at,
    round(m.fusion_rate, 4)                     AS fusion_rate,
    m.kernel_count                              AS kernels,
    m.extern_kernel_count                       AS extern_calls,
    coalesce(u.graph_breaks, 0)                 AS graph_breaks,
    coalesce(u.recompiles, 0)                   AS recompiles,
    round(CASE WHEN u.compile_records > 0 THEN u.total_s END, 3) AS compile_s
FROM run_metrics m
JOIN picked p USING (run_id)
LEFT JOIN run_rollups u USING (run_id)
ORDER BY m.started_at DESC NULLS LAST, m.model
LIMIT $limit;
