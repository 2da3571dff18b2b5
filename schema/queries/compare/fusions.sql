-- Compare: the fusion groups of one run, with each graph's pre-fusion node count
-- @internal used by `iwh compare` and the Compare page
-- One row per post-fusion scheduler node; `members` are the pre-fusion node names (op0, op1, ...),
-- comparable between two runs only when their pre-fusion graphs have the same nodes.
-- @param run VARCHAR run id
SELECT
    f.graph_id, g.compile_id, g.phase, g.pre_fusion_nodes, f.group_name, f.node_class,
    f.member_count, f.members, f.kernel_name
FROM fusions f
LEFT JOIN graphs g USING (run_key, run_id, graph_id)
WHERE f.run_id = $run AND f.run_key = (SELECT run_key FROM runs WHERE run_id = $run)
ORDER BY g.compile_id NULLS LAST, g.phase, f.graph_id, f.group_name, f.node_class, f.kernel_name, f.members;
