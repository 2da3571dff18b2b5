-- Generated vs extern kernel time per run (where profiled)
-- From torch.profiler traces: generated = kernels Inductor generated in that run (matched by name),
-- extern = other kernels inside compiled regions (cuBLAS, cuDNN, ATen fallbacks), eager = kernels
-- outside any compiled region (optimizer, loss, input copies). Shares are of the run's total.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only this compiler version
WITH picked AS (
    SELECT run_id, model, compiler_version, labels
    FROM runs r
    WHERE ($model IS NULL OR r.model = $model)
      AND ($compiler IS NULL OR r.compiler_version = $compiler)
), generated AS (
    SELECT DISTINCT run_id, kernel_name FROM kernels WHERE generated AND run_id IN (SELECT run_id FROM picked)
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
    WHERE t.kind = 'kernel' AND t.source = 'profiler' AND t.run_id IN (SELECT run_id FROM picked)
), per_run AS (
    -- summed per run before the runs' labels are read: JSON extraction on every kernel row is the cost
    SELECT
        run_id,
        sum(duration_us)                                   AS kernel_us,
        sum(duration_us) FILTER (WHERE kind = 'generated') AS generated_us,
        sum(duration_us) FILTER (WHERE kind = 'extern')    AS extern_us,
        sum(duration_us) FILTER (WHERE kind = 'eager')     AS eager_us,
        sum(calls) FILTER (WHERE kind = 'generated')       AS generated_launches,
        sum(calls) FILTER (WHERE kind = 'extern')          AS extern_launches
    FROM classified
    GROUP BY run_id
)
SELECT
    r.model,
    r.compiler_version,
    r.labels ->> 'mode'                        AS mode,
    r.labels ->> 'dtype'                       AS dtype,
    r.labels ->> 'variant'                     AS variant,
    r.run_id,
    round(c.kernel_us, 3)                      AS kernel_us,
    round(c.generated_us, 3)                   AS generated_us,
    round(c.extern_us, 3)                      AS extern_us,
    round(c.eager_us, 3)                       AS eager_us,
    c.generated_launches::BIGINT               AS generated_launches,
    c.extern_launches::BIGINT                  AS extern_launches,
    round(c.generated_us / c.kernel_us, 4)     AS generated_share,
    round(c.extern_us / c.kernel_us, 4)        AS extern_share
FROM per_run c
JOIN picked r USING (run_id)
ORDER BY r.model, version_key(r.compiler_version), r.compiler_version, mode, dtype, variant, r.run_id;
