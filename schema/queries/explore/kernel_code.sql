-- Generated kernels of a run's graph: where each is defined and the kept text of its source hash
-- @internal used by the Run explorer (analysis/kernel_code.py: its own text is read from the graph's output code)
-- line is the definition's line in the graph's output code (explore/output_code); shared_source the one text
-- kept for the kernel's normalised source hash, which may be an identical kernel's of another graph or run.
-- @param run_id VARCHAR the run
-- @param graph_id VARCHAR the graph
-- @param kernel_name VARCHAR the kernel (NULL: every generated kernel of the graph)
SELECT k.kernel_name, k.backend, k.line, k.source_hash, s.source AS shared_source
FROM kernels k
LEFT JOIN kernel_sources s USING (source_hash)
WHERE k.run_id = $run_id AND k.run_key = (SELECT run_key FROM runs WHERE run_id = $run_id) AND k.graph_id = $graph_id
  AND ($kernel_name IS NULL OR k.kernel_name = $kernel_name) AND k.generated
ORDER BY k.site, k.kernel_name, k.line, k.source_hash;
