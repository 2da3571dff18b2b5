-- Generated vs extern kernel time per run (where profiled)
-- From torch.profiler traces: generated = kernels Inductor generated in that run (matched by name),
-- extern = other kernels inside compiled regions (cuBLAS, cuDNN, ATen fallbacks), eager = kernels
-- outside any compiled region (optimizer, loss, input copies). Shares are of the run's total.
-- extern time is that of kernels launched inside the graphs' extern calls (their CPU op: the
-- profiler's own links, views/11_extern_ops.sql) and any other non-generated kernel of a compiled
-- region. Runs whose profile has no kernel events (a CPU run's) are absent.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only this compiler version
-- the sums are the run's rollup (run_rollups_of: kernel_us .. extern_launches)
SELECT
    r.model,
    r.compiler_version,
    r.workload,
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
JOIN run_workloads r USING (run_id)
WHERE c.profiled_kernels > 0
  AND r.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model, 'compilers': $compiler}))
ORDER BY r.model, r.workload, version_key(r.compiler_version), r.compiler_version, r.run_id;
