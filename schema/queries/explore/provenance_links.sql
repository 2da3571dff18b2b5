-- The provenance viewer's links: a graph's lineage rows, with the code of each model line
-- @internal used by the Run explorer's provenance viewer
-- Every lineage row of the graph (node mappings: pre-grad node -> post-grad node -> kernel with its
-- debug handle; stack traces: kernel -> model line), and the model line's code where an FX node of
-- the run carries it.
-- @param run_id VARCHAR the run
-- @param graph_id VARCHAR the graph
WITH run AS (
    SELECT run_id, run_key FROM runs WHERE run_id = $run_id
), code AS (
    SELECT o.source_file, o.source_line, min(o.source_code) AS source_code
    FROM ops o JOIN run USING (run_key, run_id)
    WHERE o.source_file IS NOT NULL
    GROUP BY ALL
)
SELECT l.source_node, l.post_grad_node, l.kernel_name, l.debug_handle, l.user_file, l.user_line, l.source,
       c.source_code
FROM lineage l
JOIN run USING (run_key, run_id)
LEFT JOIN code c ON c.source_file = l.user_file AND c.source_line = l.user_line
WHERE l.graph_id = $graph_id
ORDER BY l.kernel_name NULLS LAST, l.post_grad_node NULLS LAST, l.source_node NULLS LAST, l.user_file, l.user_line,
         l.debug_handle, l.source, c.source_code;
