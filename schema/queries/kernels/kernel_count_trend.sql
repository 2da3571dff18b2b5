-- Kernel count trend of each workload across compiler versions and dates
-- One row per run, by workload (views/12_workloads.sql), then release (version_key), then date:
-- generated kernels, extern calls and fusion rate (views/20_run_metrics.sql); kernels_delta is the
-- change from the workload's last run before with a kernel count (never across workloads): a run whose
-- count is unknown (NULL: its output code never came) has no delta and is no base of the next one.
-- @param model VARCHAR only this model (all models when not given)
-- @param label VARCHAR show this label's value too (e.g. nightly)
SELECT
    m.model,
    m.workload,
    m.compiler_version,
    m.labels ->> $label                        AS label_value,
    m.started_at::DATE                         AS started_on,
    m.graphs,
    m.kernel_count                             AS kernels,
    m.extern_kernel_count                      AS extern_kernels,
    round(m.fusion_rate, 4)                    AS fusion_rate,
    m.kernel_count - lag(m.kernel_count IGNORE NULLS) OVER w AS kernels_delta
FROM run_metrics m
WHERE m.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model}))
WINDOW w AS (PARTITION BY m.workload ORDER BY version_key(m.compiler_version), m.compiler_version, m.started_at, m.run_id)
ORDER BY m.model, m.workload, version_key(m.compiler_version), m.compiler_version, m.started_at, m.run_id;
