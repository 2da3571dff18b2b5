-- Changes: the generated kernels of every run of a model, by identity
-- A kernel's identity is its signature (the name without its per-graph counter) and the hash of its
-- normalised source; `iwh changes` compares these multisets from run to run.
-- @param model VARCHAR the model
-- @param runs VARCHAR only these runs (comma-separated run ids)
SELECT k.run_id, g.phase, k.signature, k.source_hash
FROM kernels k
JOIN runs r USING (run_id)
LEFT JOIN graphs g USING (run_id, graph_id)
WHERE r.model = $model AND k.generated
  AND ($runs IS NULL OR list_contains(string_split($runs, ','), k.run_id))
ORDER BY k.run_id, g.phase, k.signature, k.source_hash;
