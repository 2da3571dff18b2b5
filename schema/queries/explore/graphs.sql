-- The graphs (Inductor compiles) of a run, in compile order, with fusion and profiled kernel time
-- fusion_rate as in views/10_graph_metrics.sql; kernel_time_us sums the profiler's time of the
-- graph's kernels (NULL without a profile).
-- @param run_id VARCHAR the run
SELECT
    g.graph_id,
    g.compile_id,
    g.phase,
    g.folder,
    g.pre_fusion_nodes,
    g.post_fusion_nodes,
    round(g.fusion_rate, 4)      AS fusion_rate,
    g.kernel_count               AS kernels,
    g.extern_kernel_count        AS extern_calls,
    (SELECT round(sum(t.duration_us), 1) FROM timings t
      WHERE t.run_key = gg.run_key AND t.run_id = g.run_id AND t.graph_id = g.graph_id AND t.kind = 'kernel') AS kernel_time_us
FROM graph_metrics g
JOIN graphs gg USING (run_id, graph_id)
WHERE g.run_id = $run_id AND gg.run_key = (SELECT run_key FROM runs WHERE run_id = $run_id)
ORDER BY gg.compile_order NULLS LAST, g.compile_id, g.graph_id;
