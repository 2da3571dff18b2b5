-- Compile time per workload x compiler version: the fastest run's dynamo / aot / inductor / code gen
-- One row per workload (views/12_workloads.sql) and compiler version: of its runs with compile times,
-- the fastest run by total (its total is time_of_runs, the min of N every compile time is shown by:
-- views/06_point_values.sql), and that run's exclusive phases, which
-- add up to its total (view run_compile_time: dynamo_s + aot_s + inductor_s + code_gen_s = total_s;
-- autotune_s and cxx_triton_compile_s are parts of code_gen_s), in seconds. A part is NULL when a
-- release does not report the timers it needs; a total is NULL (unknown) where the files miss a part
-- (2.4's lazily compiled backward: views/15_run_rollups_of.sql), and the fastest is of the runs with a
-- total. `runs` says how many runs it is the fastest of. A page of
-- `limit` groups from `offset`, in order of workload and release; `total` counts them all.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
-- @param limit INTEGER default=200 at most this many groups
-- @param offset INTEGER default=0 skip this many groups (paging)
WITH timed AS (
    SELECT m.model, m.workload, m.compiler_version, m.device, t.*,
           row_number() OVER w AS nth, count(t.total_s) OVER (PARTITION BY m.workload, m.compiler_version) AS runs
    FROM run_compile_time t
    JOIN run_metrics m USING (run_id)
    WHERE m.run_id IN (SELECT run_id FROM picked_runs(MAP {'compilers': $compilers, 'models': $models,
                                                      'devices': $devices, 'labels': $labels}))
    WINDOW w AS (PARTITION BY m.workload, m.compiler_version ORDER BY t.total_s ASC NULLS LAST, t.run_id)
), groups AS (
    SELECT
    model,
    workload,
    compiler_version,
    device,
    runs,
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
