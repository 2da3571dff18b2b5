-- Compile time breakdown per model x compiler version: dynamo / aot / inductor / code gen / autotune
-- In seconds, summed over the runs, from the view run_compile_time (its header defines the exclusive
-- phases: dynamo_s + aot_s + inductor_s + code_gen_s = total_s; autotune_s and cxx_triton_compile_s
-- are parts of code_gen_s). A part is NULL when a release does not report the timers it needs.
-- @param model VARCHAR only this model
-- @param device VARCHAR only this device
SELECT
    r.model,
    r.compiler_version,
    r.device,
    count(*)                          AS runs,
    sum(p.frames)::BIGINT             AS frames,
    round(sum(p.total_s), 3)          AS total_s,
    round(sum(p.dynamo_s), 3)         AS dynamo_s,
    round(sum(p.aot_s), 3)            AS aot_s,
    round(sum(p.inductor_s), 3)       AS inductor_s,
    round(sum(p.code_gen_s), 3)       AS code_gen_s,
    round(sum(p.autotune_s), 3)       AS autotune_s,
    round(sum(p.cxx_triton_compile_s), 3) AS cxx_triton_compile_s
FROM run_compile_time p
JOIN runs r USING (run_id)
WHERE ($model IS NULL OR r.model = $model)
  AND ($device IS NULL OR r.device = $device)
GROUP BY r.model, r.compiler_version, r.device
ORDER BY r.model, version_key(compiler_version), compiler_version, r.device;
