-- One run: its identity, environment, labels and totals
-- @internal used by the Run explorer page
-- workload as in views/12_workloads.sql; profiler_files counts the profiler traces read (a trace
-- whose kernel events are 0 is a CPU run's: the profiler records CPU ops, not Inductor's C++ kernels);
-- trace_logs counts its TORCH_TRACE logs. compile_events counts the graph breaks, recompiles,
-- restarts and failures the run's rows hold, not the unknown_* rows that say why a count is unknown;
-- NULL (unknown, never 0) where it holds none and no file of it tells any of those counts
-- (run_metrics: a profile, a debug tree, torch-spyre files).
-- @param run_id VARCHAR the run
SELECT
    r.run_id, r.model, r.compiler_version, r.compiler_commit, r.device, r.device_name, r.backend, r.rank,
    r.python_version, r.triton_version, r.cuda_version, r.labels, r.source_path, r.started_at, r.ingested_at,
    r.artifact_bytes, m.workload,
    li.graphs, li.kernels, li.extern_calls,
    m.pre_fusion_nodes, m.post_fusion_nodes, round(m.fusion_rate, 4) AS fusion_rate,
    (SELECT count(*) FROM timings t WHERE t.run_key = r.run_key AND t.run_id = r.run_id AND t.kind = 'kernel') AS profiled_kernels,
    (SELECT u.profiler_files FROM run_rollups u WHERE u.run_id = r.run_id) AS profiler_files,
    CASE WHEN ev.events > 0 OR m.graph_breaks IS NOT NULL OR m.uncounted_breaks IS NOT NULL OR m.recompiles IS NOT NULL
              OR m.restarts IS NOT NULL OR li.failures IS NOT NULL THEN ev.events END AS compile_events,
    (SELECT count(*) FROM artifacts a WHERE a.run_key = r.run_key AND a.run_id = r.run_id AND a.kind = 'torch_trace') AS trace_logs,
    m.graph_breaks, m.uncounted_breaks, m.recompiles, m.restarts, li.failures, m.fallbacks,
    (SELECT count(*) FROM ingest_errors e WHERE e.run_id = r.run_id) AS ingest_errors
FROM runs r
JOIN run_metrics m USING (run_id)
JOIN run_listing li USING (run_id)  -- counts NULL where the run holds nothing they are read from
CROSS JOIN LATERAL (SELECT count(*) AS events FROM compile_events e
                    WHERE e.run_key = r.run_key AND e.run_id = r.run_id AND e.kind NOT LIKE 'unknown\_%' ESCAPE '\') AS ev
WHERE r.run_id = $run_id;
