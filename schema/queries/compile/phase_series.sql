-- Compile time per phase across compiler versions (every dynamo_timed phase a release logs)
-- One row per workload (model, mode, dtype, variant, batch, device), compiler version and phase:
-- the median over the workload's runs of the phase's seconds in a run (run_phase_times), so "2.14
-- made inductor_compile slower for this model" reads down one phase's rows. A phase a release does
-- not log has no row at that version.
-- @param model VARCHAR only this model
-- @param phase VARCHAR only phases whose name contains this (e.g. inductor_compile, code_gen)
WITH series AS (
    SELECT r.model, r.labels ->> 'mode' AS mode, r.labels ->> 'dtype' AS dtype, r.labels ->> 'variant' AS variant,
           r.labels ->> 'batch' AS batch, r.device, r.compiler_version, p.phase,
           count(*) AS runs, round(median(p.seconds), 6) AS seconds, median(p.spans)::BIGINT AS spans
    FROM run_phase_times p
    JOIN runs r USING (run_id)
    WHERE ($model IS NULL OR r.model = $model) AND ($phase IS NULL OR contains(p.phase, $phase))
    GROUP BY ALL
)
SELECT * FROM series
ORDER BY model, mode, dtype, variant, batch, device, phase, version_key(compiler_version), compiler_version;
