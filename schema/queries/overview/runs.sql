-- Runs: model, compiler version, device, graphs, kernels and ingest errors per run
-- Newest first. Kernels are generated kernels; extern calls are counted apart.
-- @param model VARCHAR only this model
-- @param limit INTEGER at most this many runs
SELECT
    m.run_id,
    m.model,
    m.compiler_version,
    m.device,
    m.backend,
    m.graphs,
    m.kernel_count        AS kernels,
    m.extern_kernel_count AS extern_calls,
    round(m.fusion_rate, 3) AS fusion_rate,
    (SELECT count(*) FROM ingest_errors e WHERE e.run_id = m.run_id) AS errors,
    m.started_at
FROM run_metrics m
WHERE ($model IS NULL OR m.model = $model)
ORDER BY m.started_at DESC NULLS LAST, m.model, m.compiler_version
LIMIT coalesce($limit, 1000000000);
