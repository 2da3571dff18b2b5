-- Fusion groups of one graph: scheduler nodes after fusion, their members and the kernel they became
-- @internal used by the Run explorer page
-- @param run_id VARCHAR the run
-- @param graph_id VARCHAR the graph
-- @param limit INTEGER default=500 at most this many nodes
SELECT
    f.group_name,
    f.node_class,
    f.member_count,
    array_to_string(f.members, ' ')        AS members,
    f.kernel_name,
    array_to_string(f.inner_classes, ' ')  AS inner_classes,
    array_to_string(f.buffers, ' ')        AS buffers
FROM fusions f
WHERE f.run_id = $run_id AND f.run_key = (SELECT run_key FROM runs WHERE run_id = $run_id) AND f.graph_id = $graph_id
ORDER BY f.member_count DESC, f.group_name, f.node_class, f.kernel_name, members
LIMIT $limit;
