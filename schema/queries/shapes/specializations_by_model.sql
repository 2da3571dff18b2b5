-- Dynamic shapes per workload and release: symbols, specializations, guards, recompiles
-- Counts of the shape environment's records per workload (views/12_workloads.sql) and compiler
-- version (summed over its runs; of the attempts Dynamo kept: views/44_kept_shape_events.sql), and the recompiles they go with (a recompile once, however many
-- guards failed; every frame's): growth in specializations or guards between releases is
-- where recompiles come from; recompiles are run_metrics', NULL where a run cannot tell them.
-- @param model VARCHAR only this model
WITH shapes AS (
    SELECT
        r.model, r.workload, r.compiler_version,
        count(DISTINCT r.run_id)                             AS runs,
        count(*) FILTER (WHERE s.kind = 'symbol')            AS symbols,
        count(*) FILTER (WHERE s.kind = 'unbacked_symbol')   AS unbacked_symbols,
        count(*) FILTER (WHERE s.kind = 'specialization')    AS specializations,
        count(*) FILTER (WHERE s.kind = 'guard')             AS guards,
        count(*) FILTER (WHERE s.kind = 'automatic_dynamic') AS automatic_dynamic
    FROM kept_shape_events s
    JOIN run_workloads r USING (run_id)
    WHERE r.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model}))
    GROUP BY r.model, r.workload, r.compiler_version
), recompiles AS (
    -- run_metrics' recompiles (unknown where the run's files cannot tell them): a sum only where
    -- every run of the row tells them
    SELECT r.workload, r.compiler_version,
           CASE WHEN count(m.recompiles) = count(*) THEN sum(m.recompiles) END::BIGINT AS recompiles
    FROM run_workloads r
    JOIN run_metrics m USING (run_id)
    WHERE r.run_id IN (SELECT run_id FROM shape_events)
      AND r.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model}))
    GROUP BY r.workload, r.compiler_version
)
SELECT s.*, rc.recompiles
FROM shapes s
LEFT JOIN recompiles rc ON rc.workload = s.workload AND rc.compiler_version IS NOT DISTINCT FROM s.compiler_version
ORDER BY s.model, s.workload, version_key(s.compiler_version), s.compiler_version;
