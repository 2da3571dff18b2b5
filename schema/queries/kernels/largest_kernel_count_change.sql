-- Largest kernel-count changes between releases
-- For runs of the same model, mode, dtype, variant and device (labels a run lacks count as empty,
-- so unlabelled runs pair only with each other); older release on the left.
-- @param limit INTEGER default=5 how many changes to list
WITH keyed AS (
    SELECT
        model, device, compiler_version, kernel_count,
        coalesce(labels ->> 'mode', '')    AS mode,
        coalesce(labels ->> 'dtype', '')   AS dtype,
        coalesce(labels ->> 'variant', '') AS variant
    FROM run_metrics
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
WHERE version_key(a.compiler_version) < version_key(b.compiler_version)
ORDER BY abs(b.kernel_count - a.kernel_count) DESC, a.model, a.mode, a.dtype, a.variant, a.device,
         version_key(a.compiler_version), version_key(b.compiler_version)
LIMIT $limit;
