-- Cache hit rates per workload and compiler version
-- FX graph and AOTAutograd cache lookups, hits and hit rates (view run_cache), summed over the runs
-- of each workload (views/12_workloads.sql) and compiler version; runs with caches off are counted apart.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR compiler version or family, e.g. 2.13
SELECT
    r.model,
    r.workload,
    r.compiler_version,
    count(*)                                                     AS runs,
    count(*) FILTER (WHERE c.cache_temperature = 'off')          AS runs_caches_off,
    count(*) FILTER (WHERE c.cache_temperature = 'cold')         AS runs_cold,
    count(*) FILTER (WHERE c.cache_temperature = 'warm')         AS runs_warm,
    sum(c.fx_lookups)::BIGINT                                    AS fx_lookups,
    sum(c.fx_hits)::BIGINT                                       AS fx_hits,
    round(hit_rate(sum(c.fx_hits), sum(c.fx_lookups)), 3)        AS fx_hit_rate,
    sum(c.aot_lookups)::BIGINT                                   AS aot_lookups,
    sum(c.aot_hits)::BIGINT                                      AS aot_hits,
    round(hit_rate(sum(c.aot_hits), sum(c.aot_lookups)), 3)      AS aot_hit_rate,
    round(sum(c.time_saved_s), 3)                                AS time_saved_s
FROM run_workloads r
JOIN run_cache c USING (run_id)
WHERE r.run_id IN (SELECT run_id FROM sampled_runs(MAP {'models': $model, 'compilers': $compiler}))
GROUP BY r.model, r.workload, r.compiler_version
ORDER BY r.model, r.workload, version_key(r.compiler_version), r.compiler_version;
