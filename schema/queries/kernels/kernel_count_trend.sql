-- Kernel count trend of a model across compiler versions and dates
-- One row per run, by release (version_key) then date: generated kernels, extern calls and fusion rate (views/20_run_metrics.sql).
-- @param model VARCHAR only this model (all models when not given)
-- @param label VARCHAR show this label's value too (e.g. variant)
SELECT
    m.model,
    m.compiler_version,
    m.device,
    m.labels ->> $label                        AS label_value,
    m.started_at::DATE                         AS started_on,
    m.graphs,
    m.kernel_count                             AS kernels,
    m.extern_kernel_count                      AS extern_kernels,
    round(m.fusion_rate, 4)                    AS fusion_rate,
    m.kernel_count - lag(m.kernel_count) OVER w AS kernels_delta
FROM run_metrics m
WHERE ($model IS NULL OR m.model = $model)
WINDOW w AS (PARTITION BY m.model, m.device, m.labels ->> $label ORDER BY version_key(m.compiler_version), m.started_at, m.compiler_version)
ORDER BY m.model, m.device, label_value NULLS FIRST, version_key(m.compiler_version), m.started_at, m.compiler_version;
