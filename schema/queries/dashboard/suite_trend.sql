-- Trends of a whole suite: the geomean of a metric over the suite's workloads at each point, and each workload's move against it
-- @internal used by the Trends page
-- A run's suite is its `suite` label, else the suite of the benchmark-harness rows that measured it
-- (harness_links); a suite's series is one a device. At each point (a compiler version, or a day of started_at with axis=date) each
-- workload of the suite has one value a metric over its runs there, by the metric's one rule
-- (views/06_point_values.sql): kernels their lower median, fusion rate that of their median node counts, compile
-- time (s) the least of its runs of one cache kind, its compiled runs where it has any (compile_time_of_point
-- of run_compile_time; `cache` says the kind: compiled, partial, warm), and the suite its geomean over the
-- workloads with a value above 0 (geomean, workloads). A workload's step is its value over its value at the
-- suite's point before (the previous point where it was measured), none between compile times of two
-- kinds (a cache load is no step of the compiler), the suite's step the geomean of those;
-- outlier = |ln(step / suite step)|: how far a workload moved against its suite (the biggest first).
-- @param axis VARCHAR default=compiler what a point is: compiler (version) or date (the day a run started)
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated
WITH linked_suite AS (
    SELECT l.linked_run_id AS run_id, min(h.suite) AS suite
    FROM harness_links l JOIN harness_results h USING (run_id, file, line)
    GROUP BY l.linked_run_id
), runs_ AS (
    SELECT m.run_id, m.workload, coalesce(m.labels ->> 'suite', s.suite) AS suite, m.device,
           CASE WHEN $axis = 'date' THEN strftime(m.started_at, '%Y-%m-%d') ELSE m.compiler_version END AS point,
           m.kernel_count::DOUBLE AS kernels, m.pre_fusion_nodes, m.post_fusion_nodes, c.total_s AS compile_s,
           rc.cache_temperature
    FROM run_metrics m
    JOIN picked_runs(MAP {'compilers': $compilers, 'models': $models, 'devices': $devices,
                     'labels': $labels}) p USING (run_id)
    LEFT JOIN linked_suite s USING (run_id)
    LEFT JOIN run_compile_time c USING (run_id)
    LEFT JOIN run_cache rc USING (run_id)
    WHERE m.run_id NOT IN (SELECT run_id FROM harness_holders)
), per_point AS (
    SELECT suite, device, point, workload, count_of_runs(kernels) AS kernels,
           fusion_rate(count_of_runs(pre_fusion_nodes), count_of_runs(post_fusion_nodes)) AS fusion_rate,
           compile_time_of_point(compile_s, cache_temperature) AS compile_s,
           compile_cache_of_point(compile_s, cache_temperature) AS compile_cache
    FROM runs_
    WHERE suite IS NOT NULL AND point IS NOT NULL
    GROUP BY suite, device, point, workload
), per_workload AS (
    SELECT suite, device, point, workload, metric, value, CASE WHEN metric = 'compile_s' THEN compile_cache END AS cache
    FROM per_point
    CROSS JOIN (VALUES ('kernels'), ('fusion_rate'), ('compile_s')) t(metric)
    CROSS JOIN LATERAL (SELECT CASE metric WHEN 'kernels' THEN kernels WHEN 'fusion_rate' THEN fusion_rate
                                           ELSE compile_s END AS value)
    WHERE value IS NOT NULL
), ordered AS (
    SELECT *, dense_rank() OVER (PARTITION BY suite, device ORDER BY CASE WHEN $axis = 'date' THEN NULL ELSE version_key(point) END,
                                                             point) AS n
    FROM per_workload
), stepped AS (
    SELECT *, CASE WHEN cache IS NOT DISTINCT FROM lag(cache) OVER (PARTITION BY suite, device, workload, metric ORDER BY n)
                   THEN value / nullif(lag(value) OVER (PARTITION BY suite, device, workload, metric ORDER BY n), 0) END AS step,
           lag(point) OVER (PARTITION BY suite, device, workload, metric ORDER BY n) AS before
    FROM ordered
), suites AS (
    SELECT suite, device, point, metric, exp(avg(ln(CASE WHEN value > 0 THEN value END))) AS geomean,
           count(*) FILTER (WHERE value > 0) AS workloads,
           exp(avg(ln(CASE WHEN step > 0 THEN step END))) AS suite_step
    FROM stepped
    GROUP BY suite, device, point, metric
)
SELECT s.suite, s.device, s.point, s.n AS position, s.metric, s.workload, s.before, round(s.value, 6) AS value, s.cache,
       round(g.geomean, 6) AS geomean, g.workloads, round(s.step, 4) AS step, round(g.suite_step, 4) AS suite_step,
       round(abs(ln(CASE WHEN s.step > 0 AND g.suite_step > 0 THEN s.step / g.suite_step END)), 4) AS outlier
FROM stepped s
JOIN suites g ON g.suite = s.suite AND g.device IS NOT DISTINCT FROM s.device AND g.point = s.point
           AND g.metric = s.metric
ORDER BY s.suite, s.device, s.metric, s.n, outlier DESC NULLS LAST, s.workload;
