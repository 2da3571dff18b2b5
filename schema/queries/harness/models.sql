-- The harness's numbers per workload, beside the runs that compiled it (drill-down to kernels and breaks)
-- HUD's record of each workload (harness_models: a model in a mode, dtype, device and variant) at each
-- point, its latest rows there: accuracy, speedup, latencies, memory and Dynamo's counters, whether it
-- passes as HUD counts it, and the run ids of the compiles the performance and accuracy rows measured
-- (NULL when the harness ran without artifacts beside it), with their kernel and graph-break counts
-- from the warehouse. A workload's points follow each other in release order.
-- @param key VARCHAR default=compiler what a point is: compiler (version) or a label key
-- @param suite VARCHAR only this suite
-- @param model VARCHAR only this model
SELECT m.suite, m.point, m.mode, m.dtype, m.backend, m.device, m.variant, m.model, m.workload, m.batch_size,
       m.accuracy, m.passed,
       round(m.speedup, 4) AS speedup, round(m.abs_latency, 4) AS abs_latency_ms,
       round(m.compilation_latency, 3) AS compilation_latency_s, round(m.compression_ratio, 4) AS compression_ratio,
       m.graph_breaks, m.unique_graph_breaks, m.calls_captured, m.unique_graphs, m.fallbacks_to_eager,
       m.performance_run_id, m.accuracy_run_id,
       rm.kernel_count, rm.extern_kernel_count, rm.graph_breaks AS run_graph_breaks
FROM harness_models($key, NULL) m
LEFT JOIN run_rollups rm ON rm.run_id = coalesce(m.performance_run_id, m.accuracy_run_id)
WHERE ($suite IS NULL OR m.suite = $suite) AND ($model IS NULL OR m.model = $model)
ORDER BY m.suite, m.workload, m.backend, version_key(m.point), m.point;
