-- Compare: the kernels of one run, for the kernel-level diff
-- Generated kernels and extern call sites with the graph they belong to; signature is the name
-- without its per-graph counter, source_hash the hash of the normalised source. What pairs kernels
-- whose names differ (analysis/compare.py match_kernels): the ATen ops and source nodes the code
-- names (Triton), and lineage_nodes, the source nodes the provenance mappings link it to.
-- @param run VARCHAR run id
WITH lin AS (
    SELECT graph_id, kernel_name, list(DISTINCT source_node ORDER BY source_node) AS lineage_nodes
    FROM lineage
    WHERE run_id = $run AND run_key = (SELECT run_key FROM runs WHERE run_id = $run) AND source_node IS NOT NULL
    GROUP BY ALL
)
SELECT
    k.graph_id, g.compile_id, g.phase, k.kernel_name, k.generated, k.category,
    k.signature, k.source_hash, k.site, k.aten_ops, k.source_nodes, l.lineage_nodes
FROM kernels k
LEFT JOIN graphs g USING (run_key, run_id, graph_id)
LEFT JOIN lin l ON l.graph_id = k.graph_id AND l.kernel_name = k.kernel_name
WHERE k.run_id = $run AND k.run_key = (SELECT run_key FROM runs WHERE run_id = $run)
ORDER BY g.compile_id NULLS LAST, g.phase, k.graph_id, k.generated DESC, k.site, k.kernel_name;
