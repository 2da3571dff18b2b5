-- Trend points: one row per run with its fusion rate, kernels, graph breaks, recompiles and compile time
-- fusion_rate and kernels as in views/20_run_metrics.sql; graph breaks and recompiles count
-- compile_events; compile_s = dynamo_cumulative_compile_time + bwd_backward_cumulative_compile_time
-- (the total_s of compile/compile_time_breakdown.sql). `version_rank` orders versions as releases.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
-- @param limit INTEGER default=5000 at most this many runs (newest first)
WITH picked AS (
    SELECT r.*
    FROM runs r
    WHERE ($compilers IS NULL OR list_contains(string_split($compilers, ','), r.compiler_version))
      AND ($models IS NULL OR list_contains(string_split($models, ','), r.model))
      AND ($devices IS NULL OR list_contains(string_split($devices, ','), r.device))
      AND ($labels IS NULL OR NOT EXISTS (
            SELECT 1
            FROM (SELECT split_part(l, '=', 1) AS k, list(substr(l, strpos(l, '=') + 1)) AS vs
                  FROM unnest(string_split($labels, ',')) AS t(l) GROUP BY 1) AS want
            WHERE NOT coalesce(list_contains(want.vs, r.labels ->> want.k), false)))
),
events AS (
    SELECT run_id,
           count(*) FILTER (WHERE kind = 'graph_break') AS graph_breaks,
           count(*) FILTER (WHERE kind = 'recompile')   AS recompiles
    FROM compile_events WHERE run_id IN (SELECT run_id FROM picked) GROUP BY run_id
),
compile AS (
    SELECT run_id,
           sum(duration_us) FILTER (WHERE name IN ('dynamo_cumulative_compile_time',
                                                   'bwd_backward_cumulative_compile_time')) / 1e6 AS compile_s
    FROM timings
    WHERE kind = 'compile' AND source = 'compilation_metrics' AND run_id IN (SELECT run_id FROM picked)
    GROUP BY run_id
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
    coalesce(e.graph_breaks, 0)                 AS graph_breaks,
    coalesce(e.recompiles, 0)                   AS recompiles,
    round(c.compile_s, 3)                       AS compile_s
FROM run_metrics m
JOIN picked p USING (run_id)
LEFT JOIN events e USING (run_id)
LEFT JOIN compile c USING (run_id)
ORDER BY m.started_at DESC NULLS LAST, m.model
LIMIT $limit;
