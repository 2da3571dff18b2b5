-- Per-graph metrics; the fusion rate is views/05_rates.sql's, used everywhere.
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
    fusion_rate(g.pre_fusion_nodes, g.post_fusion_nodes) AS fusion_rate
FROM graphs g;
