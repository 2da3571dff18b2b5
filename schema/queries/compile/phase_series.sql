-- Compile time per phase of each workload across compiler versions (every dynamo_timed phase a release logs)
-- One row per workload (views/12_workloads.sql), compiler version and phase: the median over the
-- workload's runs of that version of the phase's seconds in a run (run_phases, summed at ingest), over
-- its runs of one cache kind as a point's compile time is (views/06_point_values.sql: the compiled
-- ones where it has any; a warm run's phases are a cache load's), so
-- "2.14 made inductor_compile slower for this model" reads down one phase's rows, releases in order. A
-- phase a release does not log has no row at that version. A page of workloads a call, in order of
-- model and workload: a warehouse of nightlies holds a thousand versions of each, more rows than a
-- chart shows; `offset` gives the next page.
-- @param model VARCHAR only this model
-- @param phase VARCHAR only phases whose name contains this (e.g. inductor_compile, code_gen)
-- @param workloads INTEGER default=1 at most this many workloads (a workload of nightlies: a thousand versions of each phase)
-- @param offset INTEGER default=0 skip this many workloads (the next page)
WITH picked AS (
    SELECT w.model, w.workload, w.device, w.compiler_version, r.run_key
    FROM run_workloads w JOIN runs r USING (run_id) JOIN run_cache c USING (run_id)
    WHERE w.run_id IN (SELECT run_id FROM sampled_runs(MAP {'models': $model}))
    QUALIFY compile_kind_order(c.cache_temperature)
            = min(compile_kind_order(c.cache_temperature)) OVER (PARTITION BY w.model, w.workload, w.device,
                                                                              w.compiler_version)
), page AS (
    SELECT model, workload FROM picked GROUP BY ALL
    ORDER BY model, workload LIMIT $workloads OFFSET $offset
), series AS (
    SELECT w.model, w.workload, w.device, w.compiler_version, p.phase,
           count(*) AS runs, round(median(p.seconds), 6) AS seconds, median(p.spans)::BIGINT AS spans
    FROM run_phases p
    JOIN (SELECT * FROM picked SEMI JOIN page USING (model, workload)) w USING (run_key)
    WHERE $phase IS NULL OR contains(p.phase, $phase)
    GROUP BY ALL
)
SELECT * FROM series
ORDER BY model, workload, phase, version_key(compiler_version), compiler_version, device;
