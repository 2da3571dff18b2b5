-- Changes: per run of a model, its generated kernels' count and one digest of their identities
-- @internal used by `iwh changes` and the What changed when page
-- The digest sums a 64-bit hash of each kernel's (phase, signature, source hash): the same multiset of
-- kernels gives the same digest in any order. `iwh changes` reads the identities themselves only for
-- the runs beside a changed digest.
-- @param model VARCHAR the model
SELECT k.run_id,
       count(*) AS kernels,
       sum(hash(g.phase, k.signature, k.source_hash)::HUGEINT) AS digest
FROM kernels k
JOIN runs r USING (run_id)
LEFT JOIN graphs g USING (run_id, graph_id)
WHERE r.model = $model AND k.generated
GROUP BY k.run_id
ORDER BY k.run_id;
