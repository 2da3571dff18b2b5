-- Largest kernel-count changes between releases
-- For runs of the same model, mode, dtype, variant and device (labels a run lacks count as empty,
-- so unlabelled runs pair only with each other); older release on the left.
-- @param limit INTEGER default=5 how many changes to list
WITH keyed AS (
    -- one row per workload, release and kernel count (the release's first version string with that
    -- count: nightlies and builds of one release pair with other releases, not with each other), so
    -- the pairs below grow with releases squared, not runs squared
    SELECT
        model, device,
        coalesce(labels ->> 'mode', '')    AS mode,
        coalesce(labels ->> 'dtype', '')   AS dtype,
        coalesce(labels ->> 'variant', '') AS variant,
        version_key(compiler_version)      AS vkey,
        kernel_count,
        min(compiler_version)              AS compiler_version
    FROM run_metrics
    GROUP BY ALL
)
SELECT
    a.model, a.device, a.mode, a.dtype, a.variant,
    a.compiler_version                  AS base_version,
    b.compiler_version                  AS head_version,
    a.kernel_count                      AS base_kernels,
    b.kernel_count                      AS head_kernels,
    b.kernel_count - a.kernel_count     AS kernels_delta
FROM keyed a
JOIN keyed b USING (model, device, mode, dtype, variant)
WHERE a.vkey < b.vkey
ORDER BY abs(b.kernel_count - a.kernel_count) DESC, a.model, a.mode, a.dtype, a.variant, a.device,
         a.vkey, b.vkey
LIMIT $limit;
