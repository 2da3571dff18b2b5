-- Per-run metrics: the run's own columns, its workload (views/12_workloads.sql) and its rollup
-- (run_rollups_of says how each sum is made). The fusion rate uses the same formula as
-- graph_metrics over the summed node counts. The compile events, one definition everywhere:
-- graph_breaks as Dynamo counts them (NULL where the run's log cannot tell them) and recompiles (a recompile once, however many guards failed),
-- of every frame wherever its code lives (compile_events.origin breaks them down), uncounted_breaks
-- (breaks Dynamo files as unimplemented), failures (failed frame compiles), fallbacks (frames that
-- then ran eagerly) and restarts.
CREATE OR REPLACE VIEW run_metrics AS
SELECT
    r.run_id,
    r.model,
    r.compiler_version,
    r.device,
    r.backend,
    r.rank,
    r.labels,
    r.started_at,
    u.workload,
    coalesce(u.graphs, 0)::BIGINT               AS graphs,
    coalesce(u.kernel_count, 0)::BIGINT         AS kernel_count,
    coalesce(u.extern_kernel_count, 0)::BIGINT  AS extern_kernel_count,
    u.pre_fusion_nodes,
    u.post_fusion_nodes,
    fusion_rate(u.pre_fusion_nodes, u.post_fusion_nodes) AS fusion_rate,
    CASE WHEN u.run_id IS NULL THEN 0 ELSE u.graph_breaks END::BIGINT AS graph_breaks,  -- NULL: unknown
    coalesce(u.uncounted_breaks, 0)::BIGINT     AS uncounted_breaks,
    coalesce(u.recompiles, 0)::BIGINT           AS recompiles,
    coalesce(u.failures, 0)::BIGINT             AS failures,
    coalesce(u.fallbacks, 0)::BIGINT            AS fallbacks,
    coalesce(u.restarts, 0)::BIGINT             AS restarts
FROM runs r
LEFT JOIN run_rollups u USING (run_id);
-- A run as the run listings show it (overview/runs, the Run explorer's explore/runs): its counts
-- under the names people read, NULL where the run holds nothing they are read from
-- (views/12_workloads.sql: kernels_unseen; a run of harness results alone records no failures).
CREATE OR REPLACE VIEW run_listing AS
SELECT run_id, model, workload, compiler_version, device, backend,
       CASE WHEN u.run_id IS NULL THEN graphs END               AS graphs,
       CASE WHEN u.run_id IS NULL THEN kernel_count END         AS kernels,
       CASE WHEN u.run_id IS NULL THEN extern_kernel_count END  AS extern_calls,
       fusion_rate,
       CASE WHEN h.run_id IS NULL THEN failures END             AS failures,
       started_at
FROM run_metrics
LEFT JOIN kernels_unseen u USING (run_id)
LEFT JOIN harness_holders h USING (run_id);
