-- Warm against cold compile time per workload and compiler version
-- Compile time (run_compile_time.total_s) of the runs of one workload (views/12_workloads.sql)
-- whose every cache lookup missed (cold) and of those whose every lookup hit (warm), each the least
-- of its runs (time_of_runs: min of N, as every compile time), and what the caches saved; runs with
-- caches off or a partly warm cache are left out.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR compiler version or family, e.g. 2.13
SELECT
    r.model,
    r.workload,
    r.compiler_version,
    count(*) FILTER (WHERE c.cache_temperature = 'cold')                        AS cold_runs,
    count(*) FILTER (WHERE c.cache_temperature = 'warm')                        AS warm_runs,
    round(time_of_runs(CASE WHEN c.cache_temperature = 'cold' THEN t.total_s END), 3) AS cold_compile_s,
    round(time_of_runs(CASE WHEN c.cache_temperature = 'warm' THEN t.total_s END), 3) AS warm_compile_s,
    round(1 - time_of_runs(CASE WHEN c.cache_temperature = 'warm' THEN t.total_s END)
              / nullif(time_of_runs(CASE WHEN c.cache_temperature = 'cold' THEN t.total_s END), 0), 3) AS saved_share
FROM run_workloads r
JOIN run_cache c USING (run_id)
JOIN run_compile_time t USING (run_id)
WHERE c.cache_temperature IN ('cold', 'warm')
  AND r.run_id IN (SELECT run_id FROM sampled_runs(MAP {'models': $model, 'compilers': $compiler}))
GROUP BY r.model, r.workload, r.compiler_version
ORDER BY r.model, r.workload, version_key(r.compiler_version), r.compiler_version;
