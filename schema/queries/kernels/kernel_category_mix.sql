-- Kernel category mix per model x compiler version
-- Generated kernels by category (pointwise, reduction, persistent_reduction, template, foreach;
-- any other category in `other`) and extern call sites; counts summed over the group's runs.
-- @param model VARCHAR only this model
-- @param device VARCHAR only this device
SELECT
    r.model,
    r.compiler_version,
    r.device,
    count(DISTINCT k.run_id)                                                   AS runs,
    count(*) FILTER (WHERE k.generated)                                        AS generated,
    count(*) FILTER (WHERE k.generated AND k.category = 'pointwise')           AS pointwise,
    count(*) FILTER (WHERE k.generated AND k.category = 'reduction')           AS reduction,
    count(*) FILTER (WHERE k.generated AND k.category = 'persistent_reduction') AS persistent_reduction,
    count(*) FILTER (WHERE k.generated AND k.category = 'template')            AS template,
    count(*) FILTER (WHERE k.generated AND k.category = 'foreach')             AS foreach,
    count(*) FILTER (WHERE k.generated AND coalesce(k.category, '') NOT IN
                     ('pointwise', 'reduction', 'persistent_reduction', 'template', 'foreach')) AS other,
    count(*) FILTER (WHERE NOT k.generated)                                    AS extern,
    round(count(*) FILTER (WHERE NOT k.generated)::DOUBLE / count(*), 4)       AS extern_share
FROM kernels k
JOIN runs r USING (run_id)
WHERE ($model IS NULL OR r.model = $model)
  AND ($device IS NULL OR r.device = $device)
GROUP BY r.model, r.compiler_version, r.device
ORDER BY r.model, version_key(compiler_version), compiler_version, r.device;
