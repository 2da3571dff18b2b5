-- Lineage of one graph: model source line -> FX node -> post-grad node -> kernel
-- @internal used by the Run explorer page
-- From the provenance mappings (or the trace); the user line comes from the FX node's source
-- where the mapping itself carries none.
-- @param run_id VARCHAR the run
-- @param graph_id VARCHAR the graph
-- @param limit INTEGER default=1000 at most this many links
SELECT
    coalesce(regexp_extract(l.user_file, '[^/]+$'), regexp_extract(o.source_file, '[^/]+$')) AS user_file,
    coalesce(l.user_line, o.source_line)   AS user_line,
    o.source_code,
    l.source_node,
    l.post_grad_node,
    l.kernel_name,
    l.source
FROM lineage l
LEFT JOIN ops o ON o.run_key = l.run_key AND o.run_id = l.run_id AND o.graph_id = l.graph_id AND o.name = l.post_grad_node
WHERE l.run_id = $run_id AND l.run_key = (SELECT run_key FROM runs WHERE run_id = $run_id) AND l.graph_id = $graph_id
ORDER BY user_file NULLS LAST, user_line NULLS LAST, l.kernel_name, l.post_grad_node, l.source_node, l.source, o.source_code
LIMIT $limit;
