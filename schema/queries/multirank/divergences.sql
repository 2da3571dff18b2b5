-- Where the ranks of a multi-rank job differ
-- One row per divergence (compile ids a rank never compiled, cache outcomes, collective order,
-- graph execution order, ops' output shapes) and rank: its value (NULL: the rank has none) and how
-- many ranks of the job share it; views/60_rank_divergences.sql defines each kind. Each rank is a
-- workload of its own (views/12_workloads.sql: rank 1 compares with rank 1 across releases); this
-- sets the ranks of one job side by side, never ranks of different jobs. Empty for a job whose
-- ranks all did the same.
-- @param job VARCHAR only this job (its `job` label, or the folder of its ranks)
-- @param kind VARCHAR only this kind: compile_ids, cache, collectives, graph_execution, tensor_meta
SELECT
    coalesce(w.labels ->> 'job', d.job) AS job,
    d.kind,
    d.key,
    d.rank,
    coalesce(d.value, '(none)')   AS value,
    d.ranks_agreeing || '/' || d.ranks AS agreeing,
    w.model,
    w.workload,
    d.run_id
FROM rank_divergences d
JOIN run_workloads w USING (run_id)
WHERE ($job IS NULL OR d.job = $job OR (w.labels ->> 'job') = $job)
  AND ($kind IS NULL OR d.kind = $kind)
ORDER BY d.job, d.kind, d.key, d.ranks_agreeing, d.rank, d.run_id;
