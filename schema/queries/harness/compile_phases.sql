-- Compile time per dynamo_timed phase per workload from the harness's compilation-metrics CSVs
-- Seconds per phase (torch._dynamo.utils.compile_times, aggregated per model), one row per CSV row
-- and phase: each workload's (harness_rows.workload) phases, a phase's points in release order, then
-- by start; a phase a release does not time has no row there. A point is harness_point's: results
-- of no known release are their set's point; with a label as key, a run without it has no row.
-- @param key VARCHAR default=compiler what a point is: compiler (version) or a label key
-- @param model VARCHAR only this model
-- @param phase VARCHAR only phases whose name contains this
SELECT suite, model, workload, mode, dtype, device,
       harness_point($key, compiler_version, labels ->> $key, harness_set_point(labels, run_id)) AS point,
       phase, round(seconds, 6) AS seconds
FROM harness_phase_times
WHERE point IS NOT NULL AND ($model IS NULL OR model = $model) AND ($phase IS NULL OR contains(phase, $phase))
ORDER BY suite, workload, phase, version_key(point), point, release_order(compiler_version, started_at), run_id, line;
