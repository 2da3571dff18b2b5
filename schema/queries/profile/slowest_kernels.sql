-- Slowest kernels (where profiled): total GPU time per kernel name, compile id and phase
-- From torch.profiler traces (timings kind = 'kernel', source = 'profiler'). `kind` is the
-- Inductor category when the name is a kernel generated in that run (a run with no output code: a
-- kernel in a compiled region named as Inductor names its kernels, views/14_kernel_names.sql),
-- 'extern' for other kernels launched inside a compiled region (cuBLAS, ATen fallbacks), 'eager'
-- outside any compiled region.
-- share = the kernel's part of its run's total kernel time.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only this compiler version
-- @param limit INTEGER default=25 at most this many kernels
WITH picked AS (
    SELECT r.run_id, u.max_kernel_us
    FROM runs r JOIN run_rollups u USING (run_id)
    WHERE u.max_kernel_us IS NOT NULL
      AND r.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model, 'compilers': $compiler}))
), floor AS (
    -- the $limit-th largest of the runs' slowest kernels: at least $limit kernels are as slow, so
    -- every kernel of the answer is too, and only runs with a kernel that slow need reading
    -- (fewer runs than $limit: no floor)
    SELECT CASE WHEN count(*) >= $limit THEN min(max_kernel_us) ELSE '-infinity'::DOUBLE END AS us
    FROM (SELECT max_kernel_us FROM picked ORDER BY max_kernel_us DESC LIMIT $limit)
), top AS (
    -- a kernel's rows, one per launch site of an extern op, summed
    SELECT t.run_id, t.compile_id, t.phase, t.name, sum(t.calls) AS calls, sum(t.duration_us) AS duration_us
    FROM timings t
    WHERE t.kind = 'kernel' AND t.source = 'profiler'
      AND t.run_id IN (SELECT run_id FROM picked WHERE max_kernel_us >= (SELECT us FROM floor))
    GROUP BY ALL
    HAVING sum(t.duration_us) >= (SELECT us FROM floor)
), generated AS (
    SELECT run_id, kernel_name, any_value(category ORDER BY category) AS category
    FROM kernels
    WHERE generated AND run_id IN (SELECT run_id FROM top)
    GROUP BY ALL
)
SELECT
    r.model,
    r.compiler_version,
    r.run_id,
    p.compile_id,
    p.phase,
    p.name                                     AS kernel_name,
    -- a run holds kernel rows (generated or extern calls: its rollup counts them) when it has output code
    coalesce(profiled_kernel_category(g.category, u.generated_kernel_rows + u.extern_calls > 0, p.compile_id, p.name),
             CASE WHEN p.compile_id IS NOT NULL THEN 'extern' ELSE 'eager' END) AS kind,
    p.calls,
    round(p.duration_us, 3)                    AS total_us,
    round(p.duration_us / nullif(p.calls, 0), 3) AS avg_us,
    round(p.duration_us / nullif(u.kernel_us, 0), 4) AS share
FROM top p
JOIN runs r USING (run_id)
JOIN run_rollups u USING (run_id)
LEFT JOIN generated g ON g.run_id = p.run_id AND g.kernel_name = p.name
ORDER BY p.duration_us DESC, r.model, r.compiler_version, r.run_id, p.compile_id, p.phase, p.name
LIMIT $limit;
