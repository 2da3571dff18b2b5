-- Kernel category mix per workload x compiler version
-- Generated kernels by category (pointwise, reduction, persistent_reduction, template, foreach;
-- any other category in `other`) and extern call sites; counts summed over the group's runs of one
-- workload (views/12_workloads.sql), `runs` says how many.
-- @param model VARCHAR only this model
-- @param device VARCHAR only this device
SELECT
    m.model,
    m.workload,
    m.compiler_version,
    count(*)                                                       AS runs,
    sum(u.generated_kernel_rows)::BIGINT                           AS generated,
    sum(u.pointwise_kernels)::BIGINT                               AS pointwise,
    sum(u.reduction_kernels)::BIGINT                               AS reduction,
    sum(u.persistent_reduction_kernels)::BIGINT                    AS persistent_reduction,
    sum(u.template_kernels)::BIGINT                                AS template,
    sum(u.foreach_kernels)::BIGINT                                 AS foreach,
    sum(u.generated_kernel_rows - u.pointwise_kernels - u.reduction_kernels - u.persistent_reduction_kernels
        - u.template_kernels - u.foreach_kernels)::BIGINT          AS other,
    sum(u.extern_calls)::BIGINT                                    AS extern,
    round(sum(u.extern_calls)::DOUBLE / sum(u.generated_kernel_rows + u.extern_calls), 4) AS extern_share
FROM run_rollups u
JOIN run_workloads m USING (run_id)
WHERE u.generated_kernel_rows + u.extern_calls > 0
  AND m.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model, 'devices': $device}))
GROUP BY m.model, m.workload, m.compiler_version
ORDER BY m.model, m.workload, version_key(compiler_version), compiler_version;
