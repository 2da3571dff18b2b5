-- Kernel category mix per model x compiler version
-- Generated kernels by category (pointwise, reduction, persistent_reduction, template, foreach;
-- any other category in `other`) and extern call sites; counts summed over the group's runs.
-- @param model VARCHAR only this model
-- @param device VARCHAR only this device
SELECT
    r.model,
    r.compiler_version,
    r.device,
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
JOIN runs r USING (run_id)
WHERE u.generated_kernel_rows + u.extern_calls > 0
  AND ($model IS NULL OR r.model = $model)
  AND ($device IS NULL OR r.device = $device)
GROUP BY r.model, r.compiler_version, r.device
ORDER BY r.model, version_key(compiler_version), compiler_version, r.device;
