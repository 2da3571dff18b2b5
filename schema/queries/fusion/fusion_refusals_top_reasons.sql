-- Fusion refusals: top reasons the scheduler gave for not fusing two nodes, across runs
-- From TORCH_LOGS="fusion" output (fusion_decisions, decision = 'refused').
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only this compiler version
-- @param limit INTEGER default=20 at most this many reasons
-- refusals counted per run and reason at ingest (run_tallies, kind fusion_refusal)
SELECT
    coalesce(d.name, '(no reason given)')      AS reason,
    sum(d.n)::BIGINT                           AS refusals,
    count(DISTINCT d.run_id)                   AS runs,
    count(DISTINCT r.workload)                 AS workloads,
    count(DISTINCT r.model)                    AS models,
    min(r.model)                               AS first_model
FROM run_tallies d
JOIN run_workloads r USING (run_id)
WHERE d.kind = 'fusion_refusal'
  AND r.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model, 'compilers': $compiler}))
GROUP BY ALL
ORDER BY refusals DESC, reason
LIMIT $limit;
