-- Compare: the kernels of one run, for the kernel-level diff
-- Generated kernels and extern call sites with the graph they belong to; signature is the name
-- without its per-graph counter, source_hash the hash of the normalised source.
-- @param run VARCHAR run id
SELECT
    k.graph_id, g.compile_id, g.phase, k.kernel_name, k.generated, k.category,
    k.signature, k.source_hash, k.site
FROM kernels k
LEFT JOIN graphs g USING (run_key, run_id, graph_id)
WHERE k.run_id = $run AND k.run_key = (SELECT run_key FROM runs WHERE run_id = $run)
ORDER BY g.compile_id NULLS LAST, g.phase, k.graph_id, k.generated DESC, k.site, k.kernel_name;
