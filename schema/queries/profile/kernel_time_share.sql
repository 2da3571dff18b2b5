-- Generated vs extern kernel time per run (where profiled)
-- From torch.profiler traces: generated = kernels Inductor generated in that run (matched by name),
-- extern = other kernels inside compiled regions (cuBLAS, cuDNN, ATen fallbacks), eager = kernels
-- outside any compiled region (optimizer, loss, input copies). Shares are of the run's total.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only this compiler version
WITH generated AS (
    SELECT DISTINCT run_id, kernel_name FROM kernels WHERE generated
), classified AS (
    SELECT
        t.run_id,
        t.duration_us,
        t.calls,
        CASE WHEN g.kernel_name IS NOT NULL THEN 'generated'
             WHEN t.compile_id IS NOT NULL THEN 'extern'
             ELSE 'eager' END AS kind
    FROM timings t
    LEFT JOIN generated g ON g.run_id = t.run_id AND g.kernel_name = t.name
    WHERE t.kind = 'kernel' AND t.source = 'profiler'
)
SELECT
    r.model,
    r.compiler_version,
    r.labels ->> 'mode'                        AS mode,
    r.labels ->> 'dtype'                       AS dtype,
    r.labels ->> 'variant'                     AS variant,
    r.run_id,
    round(sum(c.duration_us), 3)               AS kernel_us,
    round(sum(c.duration_us) FILTER (WHERE c.kind = 'generated'), 3) AS generated_us,
    round(sum(c.duration_us) FILTER (WHERE c.kind = 'extern'), 3)    AS extern_us,
    round(sum(c.duration_us) FILTER (WHERE c.kind = 'eager'), 3)     AS eager_us,
    sum(c.calls) FILTER (WHERE c.kind = 'generated')::BIGINT         AS generated_launches,
    sum(c.calls) FILTER (WHERE c.kind = 'extern')::BIGINT            AS extern_launches,
    round(sum(c.duration_us) FILTER (WHERE c.kind = 'generated') / sum(c.duration_us), 4) AS generated_share,
    round(sum(c.duration_us) FILTER (WHERE c.kind = 'extern') / sum(c.duration_us), 4)    AS extern_share
FROM classified c
JOIN runs r USING (run_id)
WHERE ($model IS NULL OR r.model = $model)
  AND ($compiler IS NULL OR r.compiler_version = $compiler)
GROUP BY r.run_id, r.model, r.compiler_version, mode, dtype, variant
ORDER BY r.model, version_key(compiler_version), compiler_version, mode, dtype, variant, r.run_id;
