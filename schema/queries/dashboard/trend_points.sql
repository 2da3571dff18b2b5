-- Trend points: one row per run with its workload, fusion rate, kernels, compile events and compile time
-- @internal used by the dashboards' pages
-- fusion_rate, kernels and the compile events as in views/20_run_metrics.sql (NULL where the run's files
-- never said them: no point of the chart, never a 0; graph_breaks and recompiles as Dynamo counts them,
-- every frame's; uncounted_breaks apart); compile_s is total_s of the
-- view run_compile_time. A trend's series is a workload (views/12_workloads.sql). Each `<metric>_point`
-- is the value of the run's point (its workload at its compiler version) by the metric's one rule
-- (views/06_point_values.sql: compile time the least of the point's runs of one cache kind, its
-- compiled runs where it has any, a count their lower median, fusion rate that of those node counts):
-- what the Trends page draws its lines through. `cache` is how the run met the caches (compile_kind:
-- compiled, partial, warm) and `compile_cache_point` the kind of runs compile_s_point is of.
-- `version_rank` orders versions as releases. Runs that hold a benchmark harness's results and
-- compiled nothing (harness_holders, as the Overview counts them apart) are no point of a trend: the
-- Benchmark suite page charts them.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
-- @param limit INTEGER default=5000 at most this many runs (newest first)
WITH picked AS (
    SELECT * FROM sampled_runs(MAP {'compilers': $compilers, 'models': $models, 'devices': $devices, 'labels': $labels})
    WHERE run_id NOT IN (SELECT run_id FROM harness_holders)
), timed AS (
    SELECT m.run_id, m.workload, m.compiler_version, c.total_s, rc.cache_temperature
    FROM run_metrics m
    JOIN picked p USING (run_id)
    LEFT JOIN run_compile_time c USING (run_id)
    LEFT JOIN run_cache rc USING (run_id)
), compile_points AS (  -- a GROUP BY: compile_time_of_point is no window function
    SELECT workload, compiler_version, compile_time_of_point(total_s, cache_temperature) AS seconds,
           compile_cache_of_point(total_s, cache_temperature) AS cache
    FROM timed
    GROUP BY workload, compiler_version
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
    round(c.total_s, 3)                         AS compile_s,
    compile_kind(t.cache_temperature)           AS cache,
    round(fusion_rate(count_of_runs(m.pre_fusion_nodes) OVER pt, count_of_runs(m.post_fusion_nodes) OVER pt), 4)
                                                AS fusion_rate_point,
    count_of_runs(li.kernels) OVER pt           AS kernels_point,
    count_of_runs(li.failures) OVER pt          AS failures_point,
    count_of_runs(m.graph_breaks) OVER pt       AS graph_breaks_point,
    count_of_runs(m.recompiles) OVER pt         AS recompiles_point,
    round(cp.seconds, 3)                        AS compile_s_point,
    cp.cache                                    AS compile_cache_point
FROM run_metrics m
JOIN picked p USING (run_id)
JOIN run_listing li USING (run_id)  -- kernels NULL where the run holds nothing they are read from
LEFT JOIN run_compile_time c USING (run_id)
JOIN timed t USING (run_id)
JOIN compile_points cp ON cp.workload = m.workload AND cp.compiler_version IS NOT DISTINCT FROM m.compiler_version
WINDOW pt AS (PARTITION BY m.workload, m.compiler_version)
ORDER BY m.started_at DESC NULLS LAST, m.model, m.workload, m.compiler_version, m.run_id
LIMIT $limit;
