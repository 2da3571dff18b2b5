-- Per-run metrics: the run's own columns and its rollup (run_rollups_of says how each sum is
-- made). The fusion rate uses the same formula as graph_metrics over the summed node counts.
CREATE OR REPLACE VIEW run_metrics AS
SELECT
    r.run_id,
    r.model,
    r.compiler_version,
    r.device,
    r.backend,
    r.labels,
    r.started_at,
    coalesce(u.graphs, 0)::BIGINT               AS graphs,
    coalesce(u.kernel_count, 0)::BIGINT         AS kernel_count,
    coalesce(u.extern_kernel_count, 0)::BIGINT  AS extern_kernel_count,
    u.pre_fusion_nodes,
    u.post_fusion_nodes,
    CASE WHEN u.pre_fusion_nodes > 0 AND u.post_fusion_nodes IS NOT NULL
         THEN 1.0 - u.post_fusion_nodes::DOUBLE / u.pre_fusion_nodes END AS fusion_rate
FROM runs r
LEFT JOIN run_rollups u USING (run_id);
