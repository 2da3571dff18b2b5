-- Latest fusion rate, kernel count and compile failures per workload
-- @internal used by the dashboards' pages
-- One row per workload (views/12_workloads.sql: model, mode, dtype, variant, batch, device) among
-- the picked runs: its latest run, the newest compiler release, then build, then start time, then
-- the greatest run id (release_order, views/30_version_key.sql), with that run's fusion rate (views/20_run_metrics.sql),
-- kernels and failed compiles (NULL for a run whose kernels the warehouse cannot see: views/20_run_metrics.sql's
-- run_listing); `runs` counts all the workload's picked runs.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
-- @param limit INTEGER default=200 at most this many workloads
-- @param offset INTEGER default=0 skip this many workloads (paging)
WITH picked AS (
    SELECT m.*
    FROM run_metrics m
    WHERE m.run_id IN (SELECT run_id FROM picked_runs(MAP {'compilers': $compilers, 'models': $models,
                                                      'devices': $devices, 'labels': $labels}))
), latest AS (
    SELECT workload, arg_max(run_id, (release_order(compiler_version, started_at), run_id)) AS run_id, count(*) AS runs
    FROM picked
    GROUP BY workload
), shown AS (
    SELECT
        m.model,
        m.workload,
        m.device,
        m.compiler_version        AS latest_compiler,
        round(m.fusion_rate, 4)   AS fusion_rate,
        li.kernels,
        li.extern_calls,
        li.graphs,
        li.failures,
        l.runs,
        m.started_at              AS latest_run_at,
        m.run_id                  AS latest_run_id
    FROM latest l
    JOIN picked m USING (run_id)
    JOIN run_listing li USING (run_id)  -- counts NULL where the run holds nothing they are read from
)
-- the total by a count, not count(*) OVER () (duckdb/duckdb#22846: see explore/runs)
SELECT s.*, (SELECT count(*) FROM shown) AS total
FROM shown s
ORDER BY model, workload
LIMIT $limit OFFSET $offset;
