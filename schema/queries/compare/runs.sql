-- Compare: the runs one selector picks, with every metric `iwh compare` compares
-- @internal used by `iwh compare` and the Compare page
-- A selector is a conjunction: compiler version (a release or family: 2.13 = any 2.13.x build),
-- run id (or a unique prefix), device, backend, model, and labels given as a JSON object of
-- string values (all must match, as workload_value spells them: mode=inference picks mode=infer;
-- a run without the label does not). compile_s = dynamo + lazily compiled backward (compilation_metrics);
-- kernel_us = profiled kernel time inside compiled regions (NULL when not profiled).
-- graph_breaks (as Dynamo counts them), uncounted_breaks, recompiles, failures, fallbacks (frames that
-- then ran eagerly) and restarts count every frame, wherever its code lives (views/20_run_metrics.sql).
-- workload: the run's workload (views/12_workloads.sql), or over the labels `pair_on` names
-- (an empty text: the model alone): runs pair when their workloads are equal. harness_only: the run
-- holds benchmark-harness results and compiled nothing (view harness_holders): no workload to pair.
-- unfinished: why the run's process did not finish (run_unfinished), NULL when it did or the run is a
-- harness holder: no sample.
-- A NULL count is unknown (run_metrics says when): no sample of that metric, never 0.
-- inductor_config_hash names the run's first compilation_metrics inductor_config (its JSON text is
-- in inductor_configs: compare/inductor_configs); a text a run would repeat thousands of times.
-- fx_cache_hit_rate and cache_temperature (off, cold, warm, partial) are the view run_cache's, with the
-- FX cache's hits and lookups a side's rate pools (analysis/metrics.py POOLED).
-- @param compiler VARCHAR compiler version or family, e.g. 2.13.0+cpu, 2.13.0 or 2.13
-- @param run VARCHAR run id or a prefix of it
-- @param device VARCHAR device
-- @param backend VARCHAR backend
-- @param model VARCHAR only this model
-- @param labels VARCHAR JSON object of label values, e.g. {"variant": "default"}
-- @param pair_on VARCHAR comma-separated workload labels (device, rank: the run's), e.g. mode,dtype,device
WITH picked AS (
    SELECT m.*
    FROM run_metrics m
    WHERE m.run_id IN (SELECT run_id FROM picked_runs(MAP {'compilers': $compiler, 'runs': $run, 'devices': $device,
                                                      'backends': $backend, 'models': $model}))
      AND ($labels IS NULL OR list_bool_and(list_transform(json_keys($labels::JSON),
                                            lambda k: coalesce(workload_value(k, m.labels ->> k)
                                                               = workload_value(k, $labels::JSON ->> k), false))))
), rolled AS (
    -- breaks, recompiles, kernel time, config and cache: the run's rollup (run_rollups_of)
    SELECT u.*
    FROM run_rollups u
    WHERE u.run_id IN (SELECT run_id FROM picked)
), env AS (
    SELECT run_id, device_name, triton_version, cuda_version, compiler_commit FROM runs
    WHERE run_id IN (SELECT run_id FROM picked)
)
SELECT
    p.run_id, p.model, p.compiler_version, env.compiler_commit, p.device, p.backend, p.rank, env.device_name,
    env.triton_version, env.cuda_version, p.labels::VARCHAR AS labels, p.started_at,
    p.graphs, p.kernel_count AS kernels, p.extern_kernel_count AS extern_kernels,
    CASE WHEN $pair_on IS NULL THEN p.workload
         ELSE workload_key(p.model, p.device, p.rank, p.labels, string_split($pair_on, ',')) END AS workload,
    p.pre_fusion_nodes, p.post_fusion_nodes, p.fusion_rate,
    p.graph_breaks, p.uncounted_breaks, p.recompiles,
    p.failures, p.fallbacks, p.restarts,
    CASE WHEN u.compile_records > 0 THEN u.total_s END AS compile_s,
    u.compiled_kernel_us AS kernel_us, u.inductor_config_hash, rc.fx_hit_rate AS fx_cache_hit_rate,
    rc.fx_hits, rc.fx_lookups, rc.cache_temperature,
    hh.run_id IS NOT NULL AS harness_only,
    -- a harness holder's rows are a sample whatever its job's exit: HUD reads a model's timeout from them
    CASE WHEN hh.run_id IS NULL THEN run_unfinished(p.labels) END AS unfinished
FROM picked p
LEFT JOIN rolled u USING (run_id)
LEFT JOIN (SELECT DISTINCT run_id FROM harness_holders) hh USING (run_id)
LEFT JOIN env USING (run_id)
LEFT JOIN run_cache rc USING (run_id)
ORDER BY p.model, p.started_at, p.run_id;
