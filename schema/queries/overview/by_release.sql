-- Runs, graphs and generated kernels per compiler release and device
SELECT
    device,
    compiler_version,
    count(*)            AS runs,
    sum(graphs)         AS graphs,
    sum(kernel_count)   AS kernels
FROM run_metrics
GROUP BY device, compiler_version
ORDER BY device, version_key(compiler_version), compiler_version;
