-- Per-run metrics: the run's own columns, its workload (views/12_workloads.sql) and its rollup
-- (run_rollups_of says how each figure is made, and when it is NULL). The fusion rate uses the same
-- formula as graph_metrics over the summed node counts. A NULL is unknown, no sample, never 0: the kernel
-- counts of a run whose output code never came (killed before it, an export) or that holds no file they
-- are read from; the compile events of a run that measured none (the benchmark harness's CSVs alone,
-- whose own graph_breaks count is its graph_breaks). The compile events, one definition everywhere:
-- graph_breaks as Dynamo counts them (the harness's count where the run's log cannot tell them) and
-- recompiles (a recompile once, however many guards failed), of every frame wherever its code lives
-- (compile_events.origin breaks them down), uncounted_breaks (breaks Dynamo files as unimplemented, or,
-- before 2.6, counts nowhere), failures (failed frame compiles), fallbacks (frames that then ran
-- eagerly) and restarts.
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
    u.graphs,
    u.kernel_count,
    u.extern_kernel_count,
    u.pre_fusion_nodes,
    u.post_fusion_nodes,
    fusion_rate(u.pre_fusion_nodes, u.post_fusion_nodes) AS fusion_rate,
    u.graph_breaks,
    u.uncounted_breaks,
    u.recompiles,
    u.failures,
    u.fallbacks,
    u.restarts
FROM runs r
LEFT JOIN run_rollups u ON u.run_key = r.run_key;
-- A run as the run listings show it (overview/runs, the Run explorer's explore/runs): its counts
-- under the names people read, NULL where the run holds nothing they are read from (run_metrics).
CREATE OR REPLACE VIEW run_listing AS
SELECT run_id, model, workload, compiler_version, device, backend,
       graphs,
       kernel_count        AS kernels,
       extern_kernel_count AS extern_calls,
       fusion_rate,
       failures,
       started_at
FROM run_metrics;
