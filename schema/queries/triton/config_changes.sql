-- Kernels of a workload whose Triton launch config changed between two sides: warps, stages, shared memory
-- The same workload (workload_key, views/12_workloads.sql: the model and the workload labels, or
-- those pair_on names, less the side's key) on a base and a head side, the latest run of each
-- (release_order); or, with `steps`, given pairs of runs (`iwh changes`: each run and the one before
-- it in a series; `iwh compare --kernels`: the two runs diffed). Their generated Triton kernels pair
-- by signature (the name without its counter) and, among kernels of one signature, by order of name;
-- listed when num_warps, num_stages, num_ctas, maxnreg or shared memory differ (a NULL side is not a
-- change: the artifacts do not say it). source_changed: the kernel's normalised source differs too.
-- @param base VARCHAR base side: a compiler version or family (2.11), or a label value with key
-- @param head VARCHAR head side
-- @param key VARCHAR default=compiler what names a side: compiler (version) or a label key (variant, nightly)
-- @param model VARCHAR only this model
-- @param pair_on VARCHAR labels that make a workload, comma-separated (default: the workload labels; device, rank: the run's)
-- @param steps VARCHAR instead of sides: pairs of run ids, base>head, comma-separated
WITH sided AS (
    SELECT w.run_id, w.model, w.compiler_version, w.started_at,
           CASE WHEN coalesce($key, 'compiler') = 'compiler' THEN
                     CASE WHEN version_matches(w.compiler_version, $base) THEN 'base'
                          WHEN version_matches(w.compiler_version, $head) THEN 'head' END
                WHEN workload_value($key, w.labels ->> $key) = workload_value($key, $base) THEN 'base'
                WHEN workload_value($key, w.labels ->> $key) = workload_value($key, $head) THEN 'head' END AS side,
           workload_key(w.model, w.device, w.rank, w.labels,
                        list_filter(list_transform(coalesce(string_split($pair_on, ','), workload_labels()), k -> trim(k)),
                                    k -> k <> coalesce($key, 'compiler'))) AS workload
    FROM run_workloads w
    WHERE $steps IS NULL AND w.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model}))
), latest AS (
    SELECT * FROM sided WHERE side IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY side, workload
                               ORDER BY release_order(compiler_version, started_at) DESC, run_id DESC) = 1
), pairs AS (
    SELECT b.run_id AS base_run, h.run_id AS head_run, b.model, b.workload
    FROM (SELECT * FROM latest WHERE side = 'base') b
    JOIN (SELECT * FROM latest WHERE side = 'head') h USING (workload)
    UNION ALL
    SELECT split_part(s.step, '>', 1), split_part(s.step, '>', 2), w.model, w.workload
    FROM (SELECT unnest(string_split($steps, ',')) AS step) s
    JOIN run_workloads w ON w.run_id = split_part(s.step, '>', 2)
    WHERE w.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model}))
), paired AS (
    -- the runs of the pairs, by key: their kernels alone are read
    SELECT run_id, run_key FROM runs WHERE run_id IN (SELECT base_run FROM pairs UNION SELECT head_run FROM pairs)
), tuned AS (
    SELECT * FROM triton_kernel_facts_of((SELECT list(run_key) FROM paired))
), facts AS (
    -- the kernels of runs with Triton facts alone: most runs of a long series may have none
    SELECT f.*, k.signature, k.source_hash,
           row_number() OVER (PARTITION BY f.run_id, k.signature ORDER BY f.kernel_name) AS nth
    FROM tuned f
    -- a name several graphs of the run give: the least graph's row (the facts are the name's)
    JOIN (SELECT run_id, kernel_name, k.signature, k.source_hash
          FROM (SELECT run_id, kernel_name, min({'graph_id': graph_id, 'signature': signature, 'source_hash': source_hash}) AS k
                FROM kernels WHERE generated AND run_key IN (SELECT run_key FROM tuned)
                GROUP BY run_id, kernel_name)) k USING (run_id, kernel_name)
)
SELECT p.model, p.workload, b.signature,
       b.kernel_name AS base_kernel, h.kernel_name AS head_kernel,
       b.num_warps AS base_num_warps, h.num_warps AS head_num_warps,
       b.num_stages AS base_num_stages, h.num_stages AS head_num_stages,
       b.shared_bytes AS base_shared_bytes, h.shared_bytes AS head_shared_bytes,
       b.n_regs AS base_n_regs, h.n_regs AS head_n_regs,
       b.config AS base_config, h.config AS head_config,
       b.source_hash IS DISTINCT FROM h.source_hash AS source_changed,
       p.base_run, p.head_run
FROM pairs p
JOIN facts b ON b.run_id = p.base_run
JOIN facts h ON h.run_id = p.head_run AND b.signature = h.signature AND b.nth = h.nth
WHERE (b.num_warps <> h.num_warps OR b.num_stages <> h.num_stages OR b.num_ctas <> h.num_ctas
       OR b.maxnreg <> h.maxnreg OR b.shared_bytes <> h.shared_bytes)
ORDER BY p.model, p.workload, p.base_run, p.head_run, b.signature, b.nth;
