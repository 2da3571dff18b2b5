-- Compile time breakdown per model x compiler version: dynamo / aot / inductor / code gen / autotune
-- From compilation_metrics (timings source = 'compilation_metrics'), in seconds, summed over the
-- runs' frames. PyTorch's cumulative timers nest (dynamo ⊇ aot_autograd ⊇ inductor ⊇ code gen);
-- the columns are the exclusive parts, so dynamo_s + aot_s + inductor_s + code_gen_s = total_s:
--   dynamo_s   = dynamo_cumulative - aot_autograd_cumulative (tracing, guards, bytecode)
--   aot_s      = aot_autograd_cumulative - inductor_cumulative, plus the lazily compiled backward's
--                bwd_backward_cumulative - bwd_inductor_cumulative
--   inductor_s = inductor_cumulative - inductor_code_gen_cumulative (and the same for bwd_)
--   code_gen_s = inductor_code_gen_cumulative (+ bwd_): scheduling, codegen, compiling the code
-- autotune_s (compile_time_autotune_time) and cxx_triton_compile_s (triton_compile_time: the
-- async compile of the generated C++/Triton) are parts of code_gen_s, shown for reference.
-- A part is NULL when a release does not report the timers it needs.
-- @param model VARCHAR only this model
-- @param device VARCHAR only this device
WITH per_run AS (
    SELECT
        t.run_id,
        sum(t.duration_us) FILTER (WHERE t.name = 'dynamo_cumulative_compile_time')               AS dynamo,
        sum(t.duration_us) FILTER (WHERE t.name = 'aot_autograd_cumulative_compile_time')         AS aot,
        sum(t.duration_us) FILTER (WHERE t.name = 'inductor_cumulative_compile_time')             AS ind,
        sum(t.duration_us) FILTER (WHERE t.name = 'inductor_code_gen_cumulative_compile_time')    AS cg,
        coalesce(sum(t.duration_us) FILTER (WHERE t.name = 'bwd_backward_cumulative_compile_time'), 0)      AS bwd,
        coalesce(sum(t.duration_us) FILTER (WHERE t.name = 'bwd_inductor_cumulative_compile_time'), 0)      AS bwd_ind,
        coalesce(sum(t.duration_us) FILTER (WHERE t.name = 'bwd_inductor_code_gen_cumulative_compile_time'), 0) AS bwd_cg,
        sum(t.duration_us) FILTER (WHERE t.name IN ('compile_time_autotune_time', 'bwd_compile_time_autotune_time')) AS autotune,
        sum(t.duration_us) FILTER (WHERE t.name IN ('triton_compile_time', 'bwd_triton_compile_time'))  AS triton,
        count(*) FILTER (WHERE t.name = 'entire_frame_compile_time')                              AS frames
    FROM timings t
    WHERE t.kind = 'compile' AND t.source = 'compilation_metrics'
    GROUP BY t.run_id
)
SELECT
    r.model,
    r.compiler_version,
    r.device,
    count(*)                                                       AS runs,
    sum(p.frames)::BIGINT                                          AS frames,
    round(sum(p.dynamo + p.bwd) / 1e6, 3)                          AS total_s,
    round(sum(p.dynamo - p.aot) / 1e6, 3)                          AS dynamo_s,
    round(sum(p.aot - p.ind + p.bwd - p.bwd_ind) / 1e6, 3)         AS aot_s,
    round(sum(p.ind - p.cg + p.bwd_ind - p.bwd_cg) / 1e6, 3)       AS inductor_s,
    round(sum(p.cg + p.bwd_cg) / 1e6, 3)                           AS code_gen_s,
    round(sum(p.autotune) / 1e6, 3)                                AS autotune_s,
    round(sum(p.triton) / 1e6, 3)                                  AS cxx_triton_compile_s
FROM per_run p
JOIN runs r USING (run_id)
WHERE ($model IS NULL OR r.model = $model)
  AND ($device IS NULL OR r.device = $device)
GROUP BY r.model, r.compiler_version, r.device
ORDER BY r.model, version_key(compiler_version), compiler_version, r.device;
