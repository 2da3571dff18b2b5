-- Largest kernel-count changes between releases of one workload
-- For runs of the same workload (views/12_workloads.sql: model, mode, dtype, variant, batch, device;
-- runs without these labels pair only with each other); older release on the left. A run whose kernel
-- count is unknown (NULL) is no side of a change.
-- @param limit INTEGER default=5 how many changes to list
WITH keyed AS (
    -- one row per workload, release and kernel count (the release's first version string with that
    -- count: nightlies and builds of one release pair with other releases, not with each other), so
    -- the pairs below grow with releases squared, not runs squared
    SELECT
        model, workload,
        version_key(compiler_version)      AS vkey,
        kernel_count,
        min(compiler_version)              AS compiler_version
    FROM run_metrics
    WHERE kernel_count IS NOT NULL
    GROUP BY ALL
)
SELECT
    a.model, a.workload,
    a.compiler_version                  AS base_version,
    b.compiler_version                  AS head_version,
    a.kernel_count                      AS base_kernels,
    b.kernel_count                      AS head_kernels,
    b.kernel_count - a.kernel_count     AS kernels_delta
FROM keyed a
JOIN keyed b USING (model, workload)
WHERE a.vkey < b.vkey
ORDER BY abs(b.kernel_count - a.kernel_count) DESC, a.model, a.workload, a.vkey, b.vkey, a.kernel_count
LIMIT $limit;
