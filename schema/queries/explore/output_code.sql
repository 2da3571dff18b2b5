-- The generated code of one graph of a run, as its run wrote it
-- @internal used to show a kernel's own code (analysis/kernel_code.py)
-- Each distinct text stored for the graph (the debug tree's output_code.py first, then the
-- TORCH_TRACE log's copy); none when the run's artifacts held no output code.
-- @param run_id VARCHAR the run
-- @param graph_id VARCHAR the graph
SELECT any_value(t.source ORDER BY t.source) AS source, s.text
FROM graph_texts t
JOIN graph_sources s USING (text_hash)
WHERE t.run_id = $run_id AND t.run_key = (SELECT run_key FROM runs WHERE run_id = $run_id) AND t.graph_id = $graph_id
  AND t.kind = 'output_code'
GROUP BY s.text_hash, s.text
ORDER BY source, s.text_hash;
