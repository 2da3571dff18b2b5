-- Per-run metrics: sums over the run's graphs; the fusion rate uses the same formula as
-- graph_metrics over the summed node counts (graphs with unknown counts left out of both sums).
CREATE OR REPLACE VIEW run_metrics AS
SELECT
    r.run_id,
    r.model,
    r.compiler_version,
    r.device,
    r.backend,
    r.labels,
    r.started_at,
    count(g.graph_id)                         AS graphs,
    coalesce(sum(g.kernel_count), 0)::BIGINT  AS kernel_count,
    coalesce(sum(g.extern_kernel_count), 0)::BIGINT AS extern_kernel_count,
    (sum(g.pre_fusion_nodes) FILTER (WHERE g.post_fusion_nodes IS NOT NULL))::BIGINT AS pre_fusion_nodes,
    (sum(g.post_fusion_nodes) FILTER (WHERE g.pre_fusion_nodes IS NOT NULL))::BIGINT AS post_fusion_nodes,
    CASE WHEN sum(g.pre_fusion_nodes) FILTER (WHERE g.post_fusion_nodes IS NOT NULL) > 0
         THEN 1.0 - (sum(g.post_fusion_nodes) FILTER (WHERE g.pre_fusion_nodes IS NOT NULL))::DOUBLE
                    / sum(g.pre_fusion_nodes) FILTER (WHERE g.post_fusion_nodes IS NOT NULL) END
                                              AS fusion_rate
FROM runs r
LEFT JOIN graphs g USING (run_id)
GROUP BY ALL;
