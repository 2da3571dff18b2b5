-- The benchmark harness's rows, linked to the runs that compiled their model, and HUD's metrics over
-- them: each defined here once (docs/ingesting.md: the benchmark harness), the canned queries in
-- queries/harness/ read these.
--
-- harness_links: a harness row's model among the runs of its job: runs named after the model whose
-- folder is the CSV's folder or lies below it (the process of the harness that compiled it, with
-- its graphs, kernels and graph breaks), of the row's mode where the run's `harness` label says one
-- (a job's folder may hold both modes' processes; the compilation-metrics CSV is the performance
-- run's). Runs of harness files alone (harness_holders) are not compiles.
CREATE OR REPLACE VIEW harness_links AS
SELECT h.run_id, h.file, h.line, r.run_id AS linked_run_id
FROM harness_results h
JOIN runs r ON r.model = h.model
           AND (r.source_path = h.job OR starts_with(r.source_path, h.job || '/'))
WHERE h.kind <> 'expected'
  AND coalesce(r.labels ->> 'harness' = CASE h.kind WHEN 'compile_times' THEN 'performance' ELSE h.kind END, true)
  AND r.run_id NOT IN (SELECT run_id FROM harness_holders);

-- harness_rows: every harness row with what its runs add: the release (the linked run's compiler,
-- else the holding run's: its manifest's `torch` or an ingest's --label torch=...), the holding
-- run's labels, and the linked run (the latest by release_order, when a job compiled the model more
-- than once). suite, mode and dtype fall back on the holding run's labels of those names; mode and
-- dtype are spelled as workload_value spells them (the harness's inference/float32 read infer/fp32).
-- workload: the row's model as a workload (workload_key over its device, mode, dtype and the holding
-- run's variant), without batch and harness mode: HUD's record of a model pairs its accuracy row,
-- which the harness runs at a small batch (8, 4 or 1), with its performance row at the model's own.
CREATE OR REPLACE VIEW harness_rows AS
WITH linked AS (
    SELECT l.run_id, l.file, l.line,
           arg_max(r.run_id, release_order(r.compiler_version, r.started_at)) AS linked_run_id,
           count(*) AS linked_runs
    FROM harness_links l
    JOIN runs r ON r.run_id = l.linked_run_id
    GROUP BY l.run_id, l.file, l.line
), spelled AS (
    SELECT h.* EXCLUDE (run_key) REPLACE (
               coalesce(h.suite, holder.labels ->> 'suite') AS suite,
               workload_value('mode', coalesce(h.mode, holder.labels ->> 'mode')) AS mode,
               workload_value('dtype', coalesce(h.dtype, holder.labels ->> 'dtype')) AS dtype,
               coalesce(h.device, holder.device) AS device),
           coalesce(lr.compiler_version, holder.compiler_version) AS compiler_version,
           holder.labels,
           holder.started_at,
           k.linked_run_id,
           coalesce(k.linked_runs, 0)::BIGINT AS linked_runs
    FROM harness_results h
    JOIN runs holder USING (run_id)
    LEFT JOIN linked k USING (run_id, file, line)
    LEFT JOIN runs lr ON lr.run_id = k.linked_run_id
)
SELECT *,
       workload_key(model, device, NULL,
                    json_merge_patch(coalesce(labels, '{}'), json_object('mode', mode, 'dtype', dtype)),
                    list_filter(workload_labels(), k -> k NOT IN ('batch', 'harness', 'rank'))) AS workload
FROM spelled;

-- harness_models(point_key, runs): HUD's record, one per workload (harness_rows.workload: the model, mode,
-- dtype, device and variant, the holding run's label, so two Inductor configs of one release stay
-- apart) of a suite and backend at a point: its accuracy (the latest accuracy row, by release_order)
-- beside its speedup, latencies and memory (the latest performance row). A point is a compiler version
-- (point_key = 'compiler' or NULL) or the value of a label (point_key = 'nightly': one point a night).
-- A model with an accuracy row and no performance row has speedup NULL: it does not pass (HUD counts
-- speedup 0 as a failure), and the other way round accuracy NULL. runs: NULL, or a list of run ids (`iwh
-- compare`'s side): only the rows that measured those runs (linked_run_id), all at one point, 'runs'.
CREATE OR REPLACE MACRO harness_models(point_key, runs) AS TABLE
WITH pointed AS (
    SELECT *, CASE WHEN runs IS NOT NULL THEN 'runs'
                   WHEN point_key IS NULL OR point_key = 'compiler' THEN compiler_version
                   ELSE labels ->> point_key END AS point,
           labels ->> 'variant' AS variant
    FROM harness_rows
    WHERE kind IN ('performance', 'accuracy')
      AND (runs IS NULL OR list_contains(runs, linked_run_id))
), latest AS (
    SELECT * FROM pointed
    QUALIFY row_number() OVER (PARTITION BY kind, suite, point, backend, workload
                               ORDER BY release_order(compiler_version, started_at) DESC, run_id DESC,
                                        file DESC, line DESC) = 1
), p AS (SELECT * FROM latest WHERE kind = 'performance'),
   a AS (SELECT * FROM latest WHERE kind = 'accuracy')
SELECT
    coalesce(p.suite, a.suite) AS suite, coalesce(p.point, a.point) AS point,
    coalesce(p.compiler_version, a.compiler_version) AS compiler_version,
    coalesce(p.mode, a.mode) AS mode, coalesce(p.dtype, a.dtype) AS dtype,
    coalesce(p.backend, a.backend) AS backend, coalesce(p.device, a.device) AS device,
    coalesce(p.variant, a.variant) AS variant, coalesce(p.model, a.model) AS model,
    coalesce(p.workload, a.workload) AS workload,
    coalesce(p.batch_size, a.batch_size) AS batch_size,
    a.accuracy, p.speedup, p.abs_latency,
    -- the performance run's compile (the timed one); the accuracy run's where there is no other
    coalesce(p.compilation_latency, a.compilation_latency) AS compilation_latency,
    p.compression_ratio, p.eager_peak_mem, p.dynamo_peak_mem,
    coalesce(a.graph_breaks, p.graph_breaks) AS graph_breaks,
    coalesce(a.unique_graph_breaks, p.unique_graph_breaks) AS unique_graph_breaks,
    coalesce(a.calls_captured, p.calls_captured) AS calls_captured,
    coalesce(a.unique_graphs, p.unique_graphs) AS unique_graphs,
    coalesce(a.fallbacks_to_eager, p.fallbacks_to_eager) AS fallbacks_to_eager,
    -- HUD's pass: a passing accuracy and a speedup that is not 0, or a pass_due_to_skip
    coalesce((a.accuracy IN ('pass', 'pass_due_to_skip', 'eager_variation') AND coalesce(p.speedup, 0) <> 0)
             OR a.accuracy = 'pass_due_to_skip', false) AS passed,
    coalesce(a.accuracy IN ('pass', 'pass_due_to_skip', 'eager_variation'), false) AS accuracy_passed,
    p.linked_run_id AS performance_run_id, a.linked_run_id AS accuracy_run_id
FROM p
FULL JOIN a
  ON p.workload = a.workload AND p.point IS NOT DISTINCT FROM a.point AND p.suite IS NOT DISTINCT FROM a.suite
 AND p.backend IS NOT DISTINCT FROM a.backend;

-- harness_summary(point_key, runs): HUD's compiler dashboard, per (suite, point, mode, dtype, backend,
-- device, variant) (torchci/lib/benchmark/compilerUtils.ts), over the group's workloads (a model
-- each, harness_models): an aggregate over workloads, as HUD's suite numbers are.
--   workloads            models of the group; passed_workloads: those that pass (harness_models)
--   pass_rate            passed_workloads / workloads
--   geomean_speedup      geometric mean of speedup over the workloads whose accuracy passes, speedup <> 0
--   compilation_latency  mean of compilation_latency (s) over those workloads, when <> 0
--   compression_ratio    mean of compression_ratio over those workloads, when <> 0
--   dynamo_peak_mem      mean over the workloads whose accuracy passes (GB)
-- geomean_speedup_all: over every workload with a speedup > 0, for jobs that ran no accuracy check.
-- runs: as harness_models's (NULL: every row). Macros take no default parameters: DuckLake's catalog cannot hold one.
CREATE OR REPLACE MACRO harness_summary(point_key, runs) AS TABLE
SELECT
    suite, point, mode, dtype, backend, device, variant,
    min(compiler_version) AS compiler_version,
    count(*) AS workloads,
    count(*) FILTER (WHERE passed) AS passed_workloads,
    count(*) FILTER (WHERE passed)::DOUBLE / count(*) AS pass_rate,
    -- ln of a positive speedup only: DuckDB computes an aggregate's argument before its FILTER, and
    -- a model the harness could not run has speedup 0
    exp(avg(ln(CASE WHEN speedup > 0 THEN speedup END)) FILTER (WHERE accuracy_passed)) AS geomean_speedup,
    avg(compilation_latency) FILTER (WHERE accuracy_passed AND compilation_latency <> 0) AS compilation_latency,
    avg(compression_ratio) FILTER (WHERE accuracy_passed AND compression_ratio <> 0) AS compression_ratio,
    avg(dynamo_peak_mem) FILTER (WHERE accuracy_passed) AS dynamo_peak_mem,
    exp(avg(ln(CASE WHEN speedup > 0 THEN speedup END))) AS geomean_speedup_all,
    count(*) FILTER (WHERE accuracy IS NULL) AS workloads_without_accuracy,
    count(*) FILTER (WHERE speedup IS NULL) AS workloads_without_performance
FROM harness_models(point_key, runs)
GROUP BY suite, point, mode, dtype, backend, device, variant;

-- harness_phase_times: the compilation-metrics CSVs long: seconds per dynamo_timed function, per
-- model row (the names are the release's own: a name missing in a release is a row missing).
CREATE OR REPLACE VIEW harness_phase_times AS
SELECT h.run_id, h.file, h.line, h.suite, h.mode, h.dtype, h.backend, h.device, h.model, h.workload, h.batch_size,
       h.compiler_version, h.started_at, h.labels, h.linked_run_id, k.phase,
       TRY_CAST(h.columns ->> k.phase AS DOUBLE) AS seconds
FROM harness_rows h,
     LATERAL (SELECT unnest(json_keys(h.columns)) AS phase) k
WHERE h.kind = 'compile_times' AND k.phase NOT IN ('dev', 'name', 'batch_size', 'tag');
