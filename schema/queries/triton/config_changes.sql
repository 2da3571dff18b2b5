-- Kernels whose Triton launch config changed between two sides: warps, stages, shared memory
-- The same workload (the model and the labels of pair_on, less the side's key) on a base and a head
-- side, the latest run of each; its generated Triton kernels paired by signature (the
-- name without its counter) and, among kernels of one signature, by order of name; listed when
-- num_warps, num_stages, num_ctas, maxnreg or shared memory differ (a NULL side is not a change: the
-- artifacts do not say it). source_changed: the kernel's normalised source differs too.
-- @param base VARCHAR base side: a compiler version or family (2.11), or a label value with key
-- @param head VARCHAR head side
-- @param key VARCHAR default=compiler what names a side: compiler (version) or a label key (variant, nightly)
-- @param model VARCHAR only this model
-- @param pair_on VARCHAR default=mode,dtype,variant,batch,device labels that make a workload (device: the run's)
WITH sided AS (
    SELECT r.*,
           CASE WHEN coalesce($key, 'compiler') = 'compiler' THEN
                     CASE WHEN version_matches(r.compiler_version, $base) THEN 'base'
                          WHEN version_matches(r.compiler_version, $head) THEN 'head' END
                WHEN r.labels ->> $key = $base THEN 'base'
                WHEN r.labels ->> $key = $head THEN 'head' END AS side,
           list_transform(list_filter(string_split($pair_on, ','), k -> trim(k) <> coalesce($key, 'compiler')),
                          k -> CASE WHEN trim(k) = 'device' THEN r.device ELSE r.labels ->> trim(k) END) AS workload
    FROM runs r
    WHERE $model IS NULL OR r.model = $model
), latest AS (
    SELECT * FROM sided WHERE side IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY side, model, workload ORDER BY started_at DESC NULLS LAST, run_id) = 1
), facts AS (
    SELECT l.side, l.model, l.workload, l.run_id, f.* EXCLUDE (run_id),
           k.signature, k.source_hash,
           row_number() OVER (PARTITION BY l.run_id, k.signature ORDER BY f.kernel_name) AS nth
    FROM latest l
    JOIN triton_kernel_facts f USING (run_id)
    JOIN (SELECT run_id, kernel_name, any_value(signature) AS signature, any_value(source_hash) AS source_hash
          FROM kernels WHERE generated GROUP BY run_id, kernel_name) k USING (run_id, kernel_name)
)
SELECT b.model, array_to_string(b.workload, ',') AS workload, b.signature,
       b.kernel_name AS base_kernel, h.kernel_name AS head_kernel,
       b.num_warps AS base_num_warps, h.num_warps AS head_num_warps,
       b.num_stages AS base_num_stages, h.num_stages AS head_num_stages,
       b.shared_bytes AS base_shared_bytes, h.shared_bytes AS head_shared_bytes,
       b.n_regs AS base_n_regs, h.n_regs AS head_n_regs,
       b.config AS base_config, h.config AS head_config,
       b.source_hash IS DISTINCT FROM h.source_hash AS source_changed,
       b.run_id AS base_run, h.run_id AS head_run
FROM (SELECT * FROM facts WHERE side = 'base') b
JOIN (SELECT * FROM facts WHERE side = 'head') h
  ON b.model = h.model AND b.workload IS NOT DISTINCT FROM h.workload AND b.signature = h.signature AND b.nth = h.nth
WHERE (b.num_warps <> h.num_warps OR b.num_stages <> h.num_stages OR b.num_ctas <> h.num_ctas
       OR b.maxnreg <> h.maxnreg OR b.shared_bytes <> h.shared_bytes)
ORDER BY b.model, workload, b.signature, b.nth;
