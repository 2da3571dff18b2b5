-- Top extern (fallback) kernels across runs
-- Extern call sites (generated = false: extern_kernels.mm, aten fallbacks) by kernel signature.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only this compiler version
-- @param limit INTEGER default=25 at most this many ops
-- call sites counted per run and op at ingest (run_tallies, kind extern_op)
SELECT
    t.name                                     AS extern_op,
    sum(t.n)::BIGINT                           AS call_sites,
    count(DISTINCT t.run_id)                   AS runs,
    count(DISTINCT r.workload)                 AS workloads,
    count(DISTINCT r.model)                    AS models,
    count(DISTINCT r.compiler_version)         AS compiler_versions
FROM run_tallies t
JOIN run_workloads r USING (run_id)
WHERE t.kind = 'extern_op'
  AND r.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model, 'compilers': $compiler}))
GROUP BY ALL
ORDER BY call_sites DESC, extern_op
LIMIT $limit;
