-- Compile time per phase of each workload across compiler versions (every dynamo_timed phase a release logs)
-- One row per workload (views/12_workloads.sql), compiler version and phase: the median over the
-- workload's runs of that version of the phase's seconds in a run (run_phase_times), so "2.14 made
-- inductor_compile slower for this model" reads down one phase's rows, releases in order. A phase a
-- release does not log has no row at that version.
-- @param model VARCHAR only this model
-- @param phase VARCHAR only phases whose name contains this (e.g. inductor_compile, code_gen)
WITH series AS (
    SELECT w.model, w.workload, w.device, w.compiler_version, p.phase,
           count(*) AS runs, round(median(p.seconds), 6) AS seconds, median(p.spans)::BIGINT AS spans
    FROM run_phase_times p
    JOIN run_workloads w USING (run_id)
    WHERE w.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model})) AND ($phase IS NULL OR contains(p.phase,
                                                      $phase))
    GROUP BY ALL
)
SELECT * FROM series
ORDER BY model, workload, phase, version_key(compiler_version), compiler_version;
