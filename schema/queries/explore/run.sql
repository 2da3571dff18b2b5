-- One run: its identity, environment, labels and totals
-- @param run_id VARCHAR the run
SELECT
    r.run_id, r.model, r.compiler_version, r.compiler_commit, r.device, r.device_name, r.backend, r.rank,
    r.python_version, r.triton_version, r.cuda_version, r.labels, r.source_path, r.started_at, r.ingested_at,
    r.artifact_bytes,
    m.graphs, m.kernel_count AS kernels, m.extern_kernel_count AS extern_calls,
    m.pre_fusion_nodes, m.post_fusion_nodes, round(m.fusion_rate, 4) AS fusion_rate,
    (SELECT count(*) FROM timings t WHERE t.run_key = r.run_key AND t.run_id = r.run_id AND t.kind = 'kernel') AS profiled_kernels,
    (SELECT count(*) FROM compile_events e WHERE e.run_key = r.run_key AND e.run_id = r.run_id) AS compile_events,
    (SELECT count(*) FROM ingest_errors e WHERE e.run_id = r.run_id) AS ingest_errors
FROM runs r
JOIN run_metrics m USING (run_id)
WHERE r.run_id = $run_id;
