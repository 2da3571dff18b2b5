-- The provenance viewer's panels: a graph's pre-grad graph, post-grad graph and generated code
-- @internal used by the Run explorer's provenance viewer
-- One text per kind (the debug tree's where both the debug tree and the trace hold one).
-- @param run_id VARCHAR the run
-- @param graph_id VARCHAR the graph
SELECT t.kind, any_value(s.text ORDER BY t.source, s.text) AS text, any_value(t.source ORDER BY t.source) AS source
FROM graph_texts t
JOIN graph_sources s USING (text_hash)
WHERE t.run_id = $run_id AND t.run_key = (SELECT run_key FROM runs WHERE run_id = $run_id) AND t.graph_id = $graph_id
GROUP BY t.kind
ORDER BY t.kind;
