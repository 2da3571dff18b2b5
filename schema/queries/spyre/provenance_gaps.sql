-- Spyre compiles whose Inductor provenance did not join
-- One row per compile of a torch-spyre provenance sidecar whose upstream projection is not `ok`:
-- provenance tracking at level 0, a cache replay (the kernels came from the cache, so Inductor
-- logged no mappings), a failed projection. These are gaps in what lineage can say about the
-- compile's kernels, not ingest errors.
-- @param model VARCHAR only this model
SELECT
    r.model,
    c.upstream_join,
    c.provenance_level,
    c.projection_failed,
    c.kernels,
    c.torch_spyre_version,
    c.torch_version,
    c.compile_key,
    r.workload,
    c.run_id
FROM spyre_compiles c
JOIN run_workloads r USING (run_id)
WHERE c.upstream_join IS DISTINCT FROM 'ok'
  AND r.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model}))
ORDER BY r.model, c.upstream_join, c.compile_key, c.run_id;
