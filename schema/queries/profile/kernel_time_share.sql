-- Generated vs extern kernel time per run (where profiled)
-- From torch.profiler traces: generated = kernels Inductor generated in that run (matched by name),
-- extern = other kernels inside compiled regions (cuBLAS, cuDNN, ATen fallbacks), eager = kernels
-- outside any compiled region (optimizer, loss, input copies). Shares are of the run's total.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only this compiler version
-- the sums are the run's rollup (run_rollups_of: kernel_us .. extern_launches)
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
    c.generated_launches                       AS generated_launches,
    c.extern_launches                          AS extern_launches,
    round(c.generated_us / c.kernel_us, 4)     AS generated_share,
    round(c.extern_us / c.kernel_us, 4)        AS extern_share
FROM run_rollups c
JOIN runs r USING (run_id)
WHERE c.profiled_kernels > 0
  AND ($model IS NULL OR r.model = $model)
  AND ($compiler IS NULL OR r.compiler_version = $compiler)
ORDER BY r.model, version_key(r.compiler_version), r.compiler_version, mode, dtype, variant, r.run_id;
