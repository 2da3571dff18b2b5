-- Triton's facts of each generated kernel: warps, stages, shared memory, registers, compile time
-- One row per Triton kernel of the chosen runs (triton_kernel_facts, joined to the kernels table for its
-- graph, category and source hash): the launch config of the binary that ran, its shared memory and
-- target (from the Triton cache the capture keeps), registers and spills (from the autotuner's debug
-- log: TORCH_LOGS=+torch._inductor.runtime.triton_heuristics), the autotune state, configs tried and
-- compile time (from the trace's triton_kernel_info). NULL: the run's artifacts do not say it. Each
-- run's rows carry its workload (views/12_workloads.sql); a workload's runs follow each other in release order.
-- @param run VARCHAR only this run (id or prefix)
-- @param model VARCHAR only this model
WITH picked AS (
    SELECT w.run_id, r.run_key, w.model, w.workload, w.compiler_version, w.labels, w.started_at
    FROM run_workloads w JOIN runs r USING (run_id)
    WHERE w.run_id IN (SELECT run_id FROM picked_runs(MAP {'runs': $run, 'models': $model}))
)
SELECT r.model, r.workload, r.compiler_version, r.labels ->> 'variant' AS variant, f.run_id, k.graph_id, f.kernel_name,
       k.category, f.num_warps, f.num_stages, f.num_ctas, f.maxnreg, f.shared_bytes, f.n_regs, f.n_spills,
       f.config, f.target, f.triton_version, f.autotune_state, f.num_configs, f.binaries,
       round(f.compile_time_us / 1e3, 3) AS compile_time_ms, k.source_hash
FROM triton_kernel_facts_of((SELECT list(run_key) FROM picked)) f
JOIN picked r USING (run_id)
LEFT JOIN (SELECT run_id, kernel_name, k.graph_id, k.category, k.source_hash
           -- a name several graphs of the run give: the least graph's row (the facts are the name's)
           FROM (SELECT run_id, kernel_name, min({'graph_id': graph_id, 'category': category, 'source_hash': source_hash}) AS k
                 FROM kernels WHERE generated AND run_key IN (SELECT run_key FROM picked)
                 GROUP BY run_id, kernel_name)) k USING (run_id, kernel_name)
ORDER BY r.model, r.workload, release_order(r.compiler_version, r.started_at), f.run_id, k.graph_id, f.kernel_name;
