-- Compile time per run, in seconds, from compilation_metrics: the one definition every query uses.
-- PyTorch's cumulative timers nest (dynamo ⊇ aot_autograd ⊇ inductor ⊇ code gen); the phase
-- columns are the exclusive parts, so dynamo_s + aot_s + inductor_s + code_gen_s = total_s:
--   total_s    = dynamo_cumulative + the lazily compiled backward's bwd_backward_cumulative
--   dynamo_s   = dynamo_cumulative - aot_autograd_cumulative (tracing, guards, bytecode)
--   aot_s      = aot_autograd_cumulative - inductor_cumulative (+ bwd_backward - bwd_inductor)
--   inductor_s = inductor_cumulative - inductor_code_gen_cumulative (+ the same for bwd_)
--   code_gen_s = inductor_code_gen_cumulative (+ bwd_): scheduling, codegen, compiling the code
-- autotune_s and cxx_triton_compile_s (the async compile of the generated C++/Triton) are parts
-- of code_gen_s. A part is NULL when a release does not report the timers it needs.
CREATE OR REPLACE VIEW run_compile_time AS
WITH per_run AS (
    SELECT
        run_id,
        sum(duration_us) FILTER (WHERE name = 'dynamo_cumulative_compile_time')               AS dynamo,
        sum(duration_us) FILTER (WHERE name = 'aot_autograd_cumulative_compile_time')         AS aot,
        sum(duration_us) FILTER (WHERE name = 'inductor_cumulative_compile_time')             AS ind,
        sum(duration_us) FILTER (WHERE name = 'inductor_code_gen_cumulative_compile_time')    AS cg,
        coalesce(sum(duration_us) FILTER (WHERE name = 'bwd_backward_cumulative_compile_time'), 0)          AS bwd,
        coalesce(sum(duration_us) FILTER (WHERE name = 'bwd_inductor_cumulative_compile_time'), 0)          AS bwd_ind,
        coalesce(sum(duration_us) FILTER (WHERE name = 'bwd_inductor_code_gen_cumulative_compile_time'), 0) AS bwd_cg,
        sum(duration_us) FILTER (WHERE name IN ('compile_time_autotune_time', 'bwd_compile_time_autotune_time')) AS autotune,
        sum(duration_us) FILTER (WHERE name IN ('triton_compile_time', 'bwd_triton_compile_time'))              AS triton,
        count(*) FILTER (WHERE name = 'entire_frame_compile_time')                            AS frames
    FROM timings
    WHERE kind = 'compile' AND source = 'compilation_metrics'
    GROUP BY run_id
)
SELECT
    run_id,
    frames,
    (dynamo + bwd) / 1e6                     AS total_s,
    (dynamo - aot) / 1e6                     AS dynamo_s,
    (aot - ind + bwd - bwd_ind) / 1e6        AS aot_s,
    (ind - cg + bwd_ind - bwd_cg) / 1e6      AS inductor_s,
    (cg + bwd_cg) / 1e6                      AS code_gen_s,
    autotune / 1e6                           AS autotune_s,
    triton / 1e6                             AS cxx_triton_compile_s
FROM per_run;
