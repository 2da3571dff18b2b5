-- Per-graph metrics. The one definition of the fusion rate, used everywhere:
--   fusion_rate = 1 - post_fusion_nodes / pre_fusion_nodes
-- the share of pre-fusion scheduler nodes that fusion merged away (0 = nothing fused;
-- 0.75 = four pre-fusion nodes per post-fusion node). NULL when either count is unknown
-- or there were no pre-fusion nodes.
CREATE OR REPLACE VIEW graph_metrics AS
SELECT
    g.run_id,
    g.graph_id,
    g.compile_id,
    g.phase,
    g.folder,
    g.pre_fusion_nodes,
    g.post_fusion_nodes,
    g.kernel_count,
    g.extern_kernel_count,
    CASE WHEN g.pre_fusion_nodes > 0 AND g.post_fusion_nodes IS NOT NULL
         THEN 1.0 - g.post_fusion_nodes::DOUBLE / g.pre_fusion_nodes END AS fusion_rate
FROM graphs g;
