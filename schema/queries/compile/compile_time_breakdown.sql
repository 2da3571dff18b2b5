-- Compile time per workload x compiler version: the fastest run's dynamo / aot / inductor / code gen
-- One row per workload (views/12_workloads.sql) and compiler version: of its runs with compile times,
-- the fastest run by total of the group's compiled runs (its total is the group's compile_point, the
-- least of its runs of one cache kind: views/06_point_values.sql), and that run's exclusive phases, which
-- add up to its total (view run_compile_time: dynamo_s + aot_s + inductor_s + code_gen_s = total_s;
-- autotune_s and cxx_triton_compile_s are parts of code_gen_s), in seconds. `cache` is the kind of runs
-- the row is of (compile_kind: compiled, caches off or cold; partial; warm, every graph loaded from the
-- caches): compiled where the group has a compiled run with a total, else partial, else warm. `runs`
-- says how many runs of that kind it is the fastest of, `other_runs` how many runs with a total of
-- another kind it leaves out (a warm run's total is a cache load, not a compile: cache/warm_vs_cold_compile_time
-- compares them). A part is NULL when a release does not report the timers it needs; a total is NULL
-- (unknown) where the files miss a part (2.4's lazily compiled backward: views/15_run_rollups_of.sql),
-- and the fastest is of the runs with a total. A page of
-- `limit` groups from `offset`, in order of workload and release; `total` counts them all.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
-- @param limit INTEGER default=200 at most this many groups
-- @param offset INTEGER default=0 skip this many groups (paging)
WITH kinds AS (
    SELECT m.model, m.workload, m.compiler_version, m.device, t.*, c.cache_temperature,
           compile_kind(c.cache_temperature) AS cache
    FROM run_compile_time t
    JOIN run_metrics m USING (run_id)
    LEFT JOIN run_cache c USING (run_id)
    WHERE m.run_id IN (SELECT run_id FROM sampled_runs(MAP {'compilers': $compilers, 'models': $models,
                                                      'devices': $devices, 'labels': $labels}))
), points AS (
    SELECT workload, compiler_version, compile_cache_of_point(total_s, cache_temperature) AS point_cache
    FROM kinds
    GROUP BY workload, compiler_version
), timed AS (
    SELECT k.*, row_number() OVER w AS nth,
           count(CASE WHEN k.cache = p.point_cache THEN k.total_s END) OVER g AS runs,
           count(CASE WHEN k.cache <> p.point_cache THEN k.total_s END) OVER g AS other_runs
    FROM kinds k
    JOIN points p ON p.workload = k.workload AND p.compiler_version IS NOT DISTINCT FROM k.compiler_version
    -- the point's kind first: a group of unknown totals alone (2.4 training) has none, its first run
    WINDOW g AS (PARTITION BY k.workload, k.compiler_version),
           w AS (PARTITION BY k.workload, k.compiler_version
                 ORDER BY k.cache IS NOT DISTINCT FROM p.point_cache DESC, k.total_s ASC NULLS LAST, k.run_id)
), groups AS (
    SELECT
    model,
    workload,
    compiler_version,
    device,
    cache,
    runs,
    other_runs,
    frames,
    round(total_s, 3)              AS total_s,
    round(dynamo_s, 3)             AS dynamo_s,
    round(aot_s, 3)                AS aot_s,
    round(inductor_s, 3)           AS inductor_s,
    round(code_gen_s, 3)           AS code_gen_s,
    round(autotune_s, 3)           AS autotune_s,
    round(cxx_triton_compile_s, 3) AS cxx_triton_compile_s,
    run_id                         AS fastest_run_id
FROM timed
WHERE nth = 1  -- a group of unknown totals alone (2.4 training): its first run
)
-- the total by a count, not count(*) OVER () (duckdb/duckdb#22846: see explore/runs)
SELECT g.*, (SELECT count(*) FROM groups) AS total
FROM groups g
ORDER BY model, workload, version_key(compiler_version), compiler_version
LIMIT $limit OFFSET $offset;
