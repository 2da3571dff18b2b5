-- Compare: the kernels of one run, for the kernel-level diff
-- @internal used by `iwh compare` and the Compare page
-- Generated kernels and extern call sites with the graph they belong to; signature is the name
-- without its per-graph counter, source_hash the hash of the normalised source. What pairs kernels
-- whose names differ (analysis/kernel_match.py match_kernels): the ATen ops and source nodes the code
-- names (Triton), lineage_nodes, the source nodes the provenance mappings link it to, and
-- scheduler_nodes, the pre-fusion nodes its fusion groups hold, as `<graph>/<its pre-fusion node
-- count>:<node>` (node names number a graph's nodes: alike only in graphs of as many nodes).
-- @param run VARCHAR run id
WITH picked AS (
    SELECT run_key FROM runs WHERE run_id = $run
), lin AS (
    SELECT graph_id, kernel_name, list(DISTINCT source_node ORDER BY source_node) AS lineage_nodes
    FROM lineage
    WHERE run_id = $run AND run_key = (SELECT run_key FROM picked) AND source_node IS NOT NULL
    GROUP BY ALL
), fused AS (
    -- the run's fusion groups alone, before their members are unnested: a filter after the unnest
    -- would reach the scan only after every run's groups were joined
    SELECT graph_id, kernel_name, members FROM fusions
    WHERE run_id = $run AND run_key = (SELECT run_key FROM picked) AND kernel_name IS NOT NULL
), sched AS (
    SELECT f.graph_id, f.kernel_name,
           list_sort(list(DISTINCT f.graph_id || '/' || coalesce(g.pre_fusion_nodes::VARCHAR, '?') || ':' || m))
               AS scheduler_nodes
    FROM fused f
    JOIN (SELECT graph_id, pre_fusion_nodes FROM graphs
          WHERE run_id = $run AND run_key = (SELECT run_key FROM picked)) g USING (graph_id),
         unnest(f.members) AS u(m)
    GROUP BY ALL
)
SELECT
    k.graph_id, g.compile_id, g.phase, k.kernel_name, k.generated, k.category,
    k.signature, k.source_hash, k.site, k.aten_ops, k.source_nodes, l.lineage_nodes, s.scheduler_nodes
FROM kernels k
LEFT JOIN graphs g USING (run_key, run_id, graph_id)
LEFT JOIN lin l ON l.graph_id = k.graph_id AND l.kernel_name = k.kernel_name
LEFT JOIN sched s ON s.graph_id = k.graph_id AND s.kernel_name = k.kernel_name
WHERE k.run_id = $run AND k.run_key = (SELECT run_key FROM picked)
ORDER BY g.compile_id NULLS LAST, g.phase, k.graph_id, k.generated DESC, k.site, k.kernel_name, k.line, k.source_hash;
