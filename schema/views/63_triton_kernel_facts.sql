-- triton_kernel_facts: one row per generated Triton kernel of a run (by name), its sources merged:
-- the binary that ran (triton_kernels.chosen: the config the trace or the autotuner's log names) gives
-- warps, stages, CTAs, maxnreg and shared memory; the trace gives the autotune state, the number of
-- configs tried and the compile time; the autotuner's debug log gives registers and spills.
-- NULL means the run's artifacts do not hold it: no Triton cache kept (shared memory, target), no
-- debug log of the autotuner (registers, spills), several configs and no word of the winner.
-- triton_kernel_facts_of(keys): those of the runs whose run keys the list `keys` holds. Queries of
-- some runs call it with their keys: a filter on the view would reach its rows only after every
-- run's kernels were grouped (4.6 M rows at 100,000 runs).
CREATE OR REPLACE MACRO triton_kernel_facts_of(keys) AS TABLE
SELECT
    run_id, run_key, kernel_name,
    max(compile_id) AS compile_id,
    coalesce(max(num_warps) FILTER (WHERE chosen AND source = 'triton_cache'),
             max(num_warps) FILTER (WHERE chosen)) AS num_warps,
    coalesce(max(num_stages) FILTER (WHERE chosen AND source = 'triton_cache'),
             max(num_stages) FILTER (WHERE chosen)) AS num_stages,
    coalesce(max(num_ctas) FILTER (WHERE chosen AND source = 'triton_cache'),
             max(num_ctas) FILTER (WHERE chosen)) AS num_ctas,
    max(maxnreg) FILTER (WHERE chosen) AS maxnreg,
    coalesce(max(shared_bytes) FILTER (WHERE chosen AND source = 'triton_cache'),
             max(shared_bytes) FILTER (WHERE chosen AND source = 'torch_logs')) AS shared_bytes,
    max(n_regs) FILTER (WHERE source = 'torch_logs' AND chosen) AS n_regs,
    max(n_spills) FILTER (WHERE source = 'torch_logs' AND chosen) AS n_spills,
    max(config) FILTER (WHERE chosen) AS config,
    max(target) AS target,
    max(triton_version) AS triton_version,
    max(autotune_state) FILTER (WHERE source = 'torch_trace') AS autotune_state,
    max(num_configs) FILTER (WHERE source = 'torch_trace') AS num_configs,
    count(*) FILTER (WHERE source = 'triton_cache') AS binaries,
    max(compile_time_us) FILTER (WHERE source = 'torch_trace') AS compile_time_us,
    coalesce(bool_or(chosen), false) AS chosen_known
FROM triton_kernels
WHERE run_key IN (SELECT unnest(keys))
GROUP BY run_id, run_key, kernel_name;

CREATE OR REPLACE VIEW triton_kernel_facts AS
SELECT * FROM triton_kernel_facts_of((SELECT list(run_key) FROM runs));
