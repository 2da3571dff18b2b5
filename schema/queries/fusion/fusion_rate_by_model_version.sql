-- Fusion rate and kernel counts per workload x compiler version (x label value)
-- fusion_rate = 1 - post_fusion_nodes / pre_fusion_nodes over the group's graphs (the definition
-- of views/05_rates.sql): the share of pre-fusion scheduler nodes that fusion merged away.
-- One group a workload (views/12_workloads.sql) and compiler version (and value of `label`); counts
-- are sums over the group's runs (one run a group: that run's numbers), `runs` says how many.
-- @param label VARCHAR group by this label too (e.g. nightly); its value is in label_value
-- @param model VARCHAR only this model
-- @param device VARCHAR only this device (cpu, cuda, spyre)
SELECT
    m.model,
    m.workload,
    m.compiler_version,
    m.labels ->> $label                        AS label_value,
    count(*)                                   AS runs,
    sum(m.graphs)::BIGINT                      AS graphs,
    sum(m.kernel_count)::BIGINT                AS kernels,
    sum(m.extern_kernel_count)::BIGINT         AS extern_kernels,
    sum(m.pre_fusion_nodes)::BIGINT            AS pre_fusion_nodes,
    sum(m.post_fusion_nodes)::BIGINT           AS post_fusion_nodes,
    round(fusion_rate(sum(m.pre_fusion_nodes), sum(m.post_fusion_nodes)), 4) AS fusion_rate
FROM run_metrics m
WHERE m.run_id IN (SELECT run_id FROM sampled_runs(MAP {'models': $model, 'devices': $device}))
GROUP BY m.model, m.workload, m.compiler_version, label_value
ORDER BY m.model, m.workload, version_key(compiler_version), compiler_version, label_value NULLS FIRST;
