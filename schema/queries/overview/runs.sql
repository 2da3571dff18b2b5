-- Runs: model, workload, compiler version, device, graphs, kernels, failures and ingest errors per run
-- Newest first. Kernels are generated kernels; extern calls are counted apart; failures are failed
-- frame compiles (views/20_run_metrics.sql); workload as in views/12_workloads.sql. kind: compile, or
-- `harness results` for a run that holds a benchmark harness's CSVs and compiled nothing (a job's CSVs
-- held apart from its processes, CI's expected values: views/61_harness.sql's harness_holders),
-- which is no workload.
-- @param model VARCHAR only this model
-- @param limit INTEGER at most this many runs
SELECT
    m.run_id,
    m.model,
    CASE WHEN h.run_id IS NULL THEN m.workload END AS workload,
    CASE WHEN h.run_id IS NULL THEN 'compile' ELSE 'harness results' END AS kind,
    m.compiler_version,
    m.device,
    m.backend,
    m.graphs,
    m.kernels,
    m.extern_calls,
    round(m.fusion_rate, 3) AS fusion_rate,
    m.failures,
    coalesce(e.errors, 0)  AS errors,
    m.started_at
FROM run_listing m
-- one aggregate instead of a count per run: the listing stays fast at 10,000 runs
LEFT JOIN (SELECT run_id, count(*) AS errors FROM ingest_errors GROUP BY run_id) e USING (run_id)
LEFT JOIN harness_holders h USING (run_id)
WHERE m.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model}))
ORDER BY m.started_at DESC NULLS LAST, m.model, m.compiler_version, m.run_id
LIMIT coalesce($limit, 1000000000);
