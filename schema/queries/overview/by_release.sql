-- Runs, workloads, graphs and generated kernels per compiler release and device, summed over workloads
-- graphs_all_workloads and kernels_all_workloads add up every run of the release: a release with
-- more workloads (or more runs of one) has more, whatever its compiler did; compare one workload
-- across releases with `iwh compare` or kernels/kernel_count_trend.
SELECT
    device,
    compiler_version,
    count(*)                      AS runs,
    count(DISTINCT workload)      AS workloads,
    sum(graphs)                   AS graphs_all_workloads,
    sum(kernel_count)             AS kernels_all_workloads
FROM run_metrics
GROUP BY device, compiler_version
ORDER BY device, version_key(compiler_version), compiler_version;
