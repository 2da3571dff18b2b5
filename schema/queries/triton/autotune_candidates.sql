-- Every config Inductor's autotuner timed for a Triton kernel: its time, registers, spills, shared memory
-- One row per config of a kernel that the autotuner's debug log (TORCH_LOGS=
-- "+torch._inductor.runtime.triton_heuristics") lists under `Benchmark all input configs for K`,
-- with its time (ms) and its binary's registers, spills and shared memory (bytes); chosen: the one
-- its `Best config` line keeps. A run without that log has no rows here.
-- @param run VARCHAR only this run (id or prefix)
-- @param model VARCHAR only this model
-- @param kernel VARCHAR only kernels whose name contains this
SELECT w.model, w.workload, t.run_id, t.kernel_name, t.config,
       round(TRY_CAST(t.metadata ->> 'time_ms' AS DOUBLE), 6) AS time_ms,
       t.num_warps, t.num_stages, t.n_regs, t.n_spills, t.shared_bytes, t.chosen
FROM triton_kernels t
JOIN run_workloads w USING (run_id)
WHERE t.source = 'torch_logs'
  AND t.run_id IN (SELECT run_id FROM picked_runs(MAP {'runs': $run, 'models': $model}))
  AND ($kernel IS NULL OR contains(t.kernel_name, $kernel))
ORDER BY w.model, w.workload, t.run_id, t.kernel_name, TRY_CAST(t.metadata ->> 'time_ms' AS DOUBLE), t.config,
         t.compile_id, t.chosen;
