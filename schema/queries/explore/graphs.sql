-- The graphs (Inductor compiles) of a run, in compile order, with fusion and profiled kernel time
-- @internal used by the Run explorer page
-- fusion_rate as in views/05_rates.sql. From the profiler (NULL without a profile, or a
-- profile without kernel events: CPU runs): generated_us is the time of the graph's own kernels,
-- extern_us that of kernels its extern calls launched (cuBLAS, cuDNN, attention;
-- views/11_extern_ops.sql), kernel_time_us every kernel the graph's call launched (their sum, and
-- any kernel neither names).
-- @param run_id VARCHAR the run
WITH times AS (
    SELECT t.graph_id, t.name, t.launched_by, t.duration_us
    FROM timings t
    WHERE t.run_id = $run_id AND t.run_key = (SELECT run_key FROM runs WHERE run_id = $run_id) AND t.kind = 'kernel'
      AND t.graph_id IS NOT NULL
), own AS (
    SELECT DISTINCT graph_id, kernel_name FROM kernels
    WHERE run_id = $run_id AND run_key = (SELECT run_key FROM runs WHERE run_id = $run_id) AND generated
), per_graph AS (
    SELECT t.graph_id,
           round(sum(t.duration_us), 1) AS kernel_time_us,
           round(sum(t.duration_us) FILTER (WHERE o.kernel_name IS NOT NULL), 1) AS generated_us,
           round(sum(t.duration_us) FILTER (WHERE t.launched_by IS NOT NULL), 1) AS extern_us
    FROM times t
    LEFT JOIN own o ON o.graph_id = t.graph_id AND o.kernel_name = t.name AND t.launched_by IS NULL
    GROUP BY t.graph_id
)
SELECT
    g.* EXCLUDE (run_id, fusion_rate, kernel_count, extern_kernel_count),
    round(g.fusion_rate, 4)      AS fusion_rate,
    g.kernel_count               AS kernels,
    g.extern_kernel_count        AS extern_calls,
    p.kernel_time_us,
    p.generated_us,
    p.extern_us
FROM graph_metrics g
JOIN graphs gg USING (run_id, graph_id)
LEFT JOIN per_graph p USING (graph_id)
WHERE g.run_id = $run_id AND gg.run_key = (SELECT run_key FROM runs WHERE run_id = $run_id)
ORDER BY gg.compile_order NULLS LAST, g.compile_id, g.graph_id;
