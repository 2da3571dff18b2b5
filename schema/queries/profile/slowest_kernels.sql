-- Slowest kernels (where profiled): total GPU time per kernel name and compile id
-- From torch.profiler traces (timings kind = 'kernel', source = 'profiler'). `kind` is the
-- Inductor category when the name is a kernel generated in that run, 'extern' for other kernels
-- launched inside a compiled region (cuBLAS, ATen fallbacks), 'eager' outside any compiled region.
-- share = the kernel's part of its run's total kernel time.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only this compiler version
-- @param limit INTEGER default=25 at most this many kernels
WITH generated AS (
    SELECT run_id, kernel_name, any_value(category ORDER BY category) AS category
    FROM kernels
    WHERE generated
    GROUP BY ALL
), prof AS (
    SELECT t.*, sum(t.duration_us) OVER (PARTITION BY t.run_id) AS run_us
    FROM timings t
    WHERE t.kind = 'kernel' AND t.source = 'profiler'
)
SELECT
    r.model,
    r.compiler_version,
    r.run_id,
    p.compile_id,
    p.name                                     AS kernel_name,
    CASE WHEN g.kernel_name IS NOT NULL THEN g.category
         WHEN p.compile_id IS NOT NULL THEN 'extern'
         ELSE 'eager' END                      AS kind,
    p.calls,
    round(p.duration_us, 3)                    AS total_us,
    round(p.duration_us / nullif(p.calls, 0), 3) AS avg_us,
    round(p.duration_us / nullif(p.run_us, 0), 4) AS share
FROM prof p
JOIN runs r USING (run_id)
LEFT JOIN generated g ON g.run_id = p.run_id AND g.kernel_name = p.name
WHERE ($model IS NULL OR r.model = $model)
  AND ($compiler IS NULL OR r.compiler_version = $compiler)
ORDER BY p.duration_us DESC, r.model, r.compiler_version, r.run_id, p.compile_id, p.name
LIMIT $limit;
