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

-- harness_row_workload: a harness row's model as a workload (workload_key over its device, mode and
-- dtype, in workload_value's spelling, and the holding run's variant label), without batch and harness
-- mode: HUD's record of a model pairs its accuracy row, which the harness runs at a small batch (8, 4
-- or 1), with its performance row at the model's own. Kept in harness_results.workload, made as the
-- loader writes the row (ingest/rollups.fill_harness_workloads), from the row and its holding run.
CREATE OR REPLACE MACRO harness_row_workload(model, device, mode, dtype, labels) AS
    workload_key(model, device, NULL,
                 json_merge_patch(coalesce(labels, '{}'),
                                  json_object('mode', workload_value('mode', mode), 'dtype', workload_value('dtype', dtype))),
                 list_filter(workload_labels(), k -> k NOT IN ('batch', 'harness', 'rank')));

-- harness_rows: every harness row with what its runs add: the release (the linked run's compiler,
-- else the holding run's: its manifest's `torch` or an ingest's --label torch=...), the holding
-- run's labels, and the linked run (the latest by release_order, then by run id, so that runs
-- written in any order link alike, when a job compiled the model more than once). suite, mode and
-- dtype fall back on the holding run's labels of those names (rows written before the parser read
-- labels); mode and dtype are spelled as workload_value spells them (the harness's
-- inference/float32 read infer/fp32). workload: harness_row_workload, as kept.
CREATE OR REPLACE VIEW harness_rows AS
WITH linked AS (
    SELECT l.run_id, l.file, l.line,
           arg_max(r.run_id, (release_order(r.compiler_version, r.started_at), r.run_id)) AS linked_run_id,
           count(*) AS linked_runs
    FROM harness_links l
    JOIN runs r ON r.run_id = l.linked_run_id
    GROUP BY l.run_id, l.file, l.line
)
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
LEFT JOIN runs lr ON lr.run_id = k.linked_run_id;

-- harness_set_point(labels, run_id): the point of harness results that name no compiler version (a
-- CI job's CSVs alone, without `torch` in a manifest or --label): a point of their own, never one
-- point with another set's numbers. It is named by the labels of the run that holds them that say
-- which set it is (not the workload's labels, nor suite and backend, which group HUD's numbers
-- anyway, nor run facts: `ci=timm-cpu-2.13`), so that the runs of one set (a job's shards, labelled
-- alike) are one point; by the run (`run 05a7cc7a31d80f8e`) where no label says.
CREATE OR REPLACE MACRO harness_set_point(labels, run_id) AS
    coalesce(nullif(array_to_string(list_sort(list_transform(
        list_filter(json_keys(coalesce(labels, '{}')), k -> NOT list_contains(workload_labels(), k)
                                                            AND k NOT IN ('suite', 'backend')
                                                            AND NOT list_contains(run_fact_keys(), k)),
        k -> k || '=' || (labels ->> k))), ' '), ''), 'run ' || run_id);

-- harness_point(point_key, compiler_version, label_value, set_point): a harness row's point. With the
-- compiler version as the key (point_key 'compiler' or NULL), the row's release, or, where none is
-- known, its set's point (harness_set_point of its holding run). With a label as the key (nightly),
-- the holding run's value of it (label_value); a run without that label is on no point of that axis
-- (NULL: its rows are left out of that key's records and numbers, and the Benchmark suite page says
-- how many runs).
-- (A CASE, not coalesce: DuckDB computes a CASE's branch only for the rows that take it, and the set's
-- name only where no release is known.)
CREATE OR REPLACE MACRO harness_point(point_key, compiler_version, label_value, set_point) AS
    CASE WHEN coalesce(point_key, 'compiler') <> 'compiler' THEN label_value
         WHEN compiler_version IS NOT NULL THEN compiler_version
         ELSE set_point END;

-- harness_point_placed(point_key, compiler_version): whether a point of harness_models or
-- harness_summary (its compiler_version) has a place in its series: a release, or a label's value.
-- A set's own point (no compiler version: harness_set_point) has none: no point is before it and it
-- is before none (harness/model_changes, harness/point_models), and the page draws it apart.
CREATE OR REPLACE MACRO harness_point_placed(point_key, compiler_version) AS
    coalesce(point_key, 'compiler') <> 'compiler' OR compiler_version IS NOT NULL;

-- harness_point_keys(): the points HUD's records and suite numbers are kept ready for, as the loader
-- writes (harness_records, harness_point_summaries): compiler versions, and nightlies (the label
-- `nightly`). Any other key (a label such as variant) is computed when asked, from every row.
CREATE OR REPLACE MACRO harness_point_keys() AS ['compiler', 'nightly'];

-- harness_point_kept(point_key, runs): whether harness_models and harness_summary read a point's
-- numbers from what the loader keeps (over every row, for a key of harness_point_keys()) rather than
-- computing them.
CREATE OR REPLACE MACRO harness_point_kept(point_key, runs) AS
    runs IS NULL AND list_contains(harness_point_keys(), coalesce(point_key, 'compiler'));

-- harness_models_of(point_key, runs): HUD's record, one per workload (harness_rows.workload: the model,
-- mode, dtype, device and variant, the holding run's label, so two Inductor configs of one release
-- stay apart) of a suite and backend at a point: its accuracy beside its speedup, latencies and
-- memory. A point is a compiler version (point_key = 'compiler' or NULL) or the value of a label
-- (point_key = 'nightly': one point a night), as harness_point says. runs: NULL, or a list of run ids (`iwh compare`'s
-- side): only the rows that measured those runs (linked_run_id) or that those runs hold, all at one
-- point, 'runs'. A workload measured more than once at a point (several runs, or rows the harness
-- appended to one CSV) has one value a metric, by the metric's one rule (the same in `iwh compare`,
-- `iwh changes`, the pages; analysis/regress.py's side_value says it in Python), over its `samples`
-- rows of a kind:
--   accuracy             worst of N: a failing value when any row failed (the first by name), else passing
--   speedup              median of N (the lower median, an observed value); 0 when any row is 0 (the
--                        harness could not run the model: a failure, not a measurement)
--   abs_latency, compilation_latency   min of N, of the rows that measured it (0 is no measurement)
--   compression_ratio, eager_peak_mem, dynamo_peak_mem   median of N, of the rows that measured it
--   Dynamo's counters, batch size, the linked runs, the release   latest (release_order, then run,
--                        file and line)
-- A model with an accuracy row and no performance row has speedup NULL: it does not pass (HUD counts
-- speedup 0 as a failure), and the other way round accuracy NULL. run_ids: the runs whose rows make
-- the record (holding and linked), which the loader's upkeep of harness_records follows. points: NULL,
-- or only the records of these points, which the upkeep remakes; model:
-- NULL, or only this model's (`iwh compare --model`).
CREATE OR REPLACE MACRO harness_models_of(point_key, runs, points, model_name) AS TABLE
WITH holders AS (
    -- what a run says of its rows' point (harness_point) and the variant, read once a run rather than
    -- once a row; a set's point only where the run names no release (its rows' linked runs may)
    SELECT run_id, labels ->> point_key AS label_point, labels ->> 'variant' AS variant,
           CASE WHEN compiler_version IS NULL THEN harness_set_point(labels, run_id) END AS set_point
    FROM runs
), pointed AS (
    SELECT h.*, CASE WHEN runs IS NOT NULL THEN 'runs'
                     ELSE harness_point(point_key, h.compiler_version, o.label_point, o.set_point) END AS point,
           o.variant
    FROM harness_rows h
    JOIN holders o USING (run_id)
    WHERE h.kind IN ('performance', 'accuracy')
      AND (runs IS NULL OR list_contains(runs, h.linked_run_id) OR list_contains(runs, h.run_id))
      AND (model_name IS NULL OR h.model = model_name)
), chosen AS (
    SELECT * FROM pointed WHERE point IS NOT NULL AND (points IS NULL OR list_contains(points, point))
), measured AS (
    SELECT kind, suite, point, backend, workload, count(*) AS samples,
           -- the latest row's, in one aggregate: one sort key for all of them
           arg_max_null({'compiler_version': compiler_version, 'linked_run_id': linked_run_id, 'batch_size': batch_size,
                         'mode': mode, 'dtype': dtype, 'device': device, 'variant': variant, 'model': model,
                         'graph_breaks': graph_breaks, 'unique_graph_breaks': unique_graph_breaks,
                         'calls_captured': calls_captured, 'unique_graphs': unique_graphs,
                         'fallbacks_to_eager': fallbacks_to_eager},
                        (release_order(compiler_version, started_at), run_id, file, line)) AS latest,
           coalesce(min(accuracy) FILTER (WHERE accuracy NOT IN ('pass', 'pass_due_to_skip', 'eager_variation')),
                    min(accuracy)) AS accuracy,
           -- one sample (the common case) is its own median
           CASE WHEN count(*) = 1 THEN any_value(speedup) WHEN bool_or(speedup = 0) THEN 0
                ELSE quantile_disc(speedup, 0.5) END AS speedup,
           min(abs_latency) FILTER (WHERE abs_latency > 0) AS abs_latency,
           min(compilation_latency) FILTER (WHERE compilation_latency > 0) AS compilation_latency,
           CASE WHEN count(*) = 1 THEN any_value(nullif(compression_ratio, 0))
                ELSE quantile_disc(compression_ratio, 0.5) FILTER (WHERE compression_ratio > 0) END AS compression_ratio,
           CASE WHEN count(*) = 1 THEN any_value(nullif(eager_peak_mem, 0))
                ELSE quantile_disc(eager_peak_mem, 0.5) FILTER (WHERE eager_peak_mem > 0) END AS eager_peak_mem,
           CASE WHEN count(*) = 1 THEN any_value(nullif(dynamo_peak_mem, 0))
                ELSE quantile_disc(dynamo_peak_mem, 0.5) FILTER (WHERE dynamo_peak_mem > 0) END AS dynamo_peak_mem,
           list_sort(list_distinct(list(run_id) || list(linked_run_id))) AS run_ids
    FROM chosen
    GROUP BY kind, suite, point, backend, workload
), p AS (SELECT * FROM measured WHERE kind = 'performance'),
   a AS (SELECT * FROM measured WHERE kind = 'accuracy')
SELECT
    coalesce(p.suite, a.suite) AS suite, coalesce(p.point, a.point) AS point,
    coalesce(p.latest.compiler_version, a.latest.compiler_version) AS compiler_version,
    coalesce(p.latest.mode, a.latest.mode) AS mode, coalesce(p.latest.dtype, a.latest.dtype) AS dtype,
    coalesce(p.backend, a.backend) AS backend, coalesce(p.latest.device, a.latest.device) AS device,
    coalesce(p.latest.variant, a.latest.variant) AS variant, coalesce(p.latest.model, a.latest.model) AS model,
    coalesce(p.workload, a.workload) AS workload,
    coalesce(p.latest.batch_size, a.latest.batch_size) AS batch_size,
    a.accuracy, p.speedup, p.abs_latency,
    -- the performance run's compile (the timed one); the accuracy run's where there is no other
    coalesce(p.compilation_latency, a.compilation_latency) AS compilation_latency,
    p.compression_ratio, p.eager_peak_mem, p.dynamo_peak_mem,
    coalesce(a.latest.graph_breaks, p.latest.graph_breaks) AS graph_breaks,
    coalesce(a.latest.unique_graph_breaks, p.latest.unique_graph_breaks) AS unique_graph_breaks,
    coalesce(a.latest.calls_captured, p.latest.calls_captured) AS calls_captured,
    coalesce(a.latest.unique_graphs, p.latest.unique_graphs) AS unique_graphs,
    coalesce(a.latest.fallbacks_to_eager, p.latest.fallbacks_to_eager) AS fallbacks_to_eager,
    -- HUD's pass: a passing accuracy and a speedup that is not 0, or a pass_due_to_skip
    coalesce((a.accuracy IN ('pass', 'pass_due_to_skip', 'eager_variation') AND coalesce(p.speedup, 0) <> 0)
             OR a.accuracy = 'pass_due_to_skip', false) AS passed,
    coalesce(a.accuracy IN ('pass', 'pass_due_to_skip', 'eager_variation'), false) AS accuracy_passed,
    p.samples AS performance_samples, a.samples AS accuracy_samples,
    p.latest.linked_run_id AS performance_run_id, a.latest.linked_run_id AS accuracy_run_id,
    list_sort(list_distinct(list_filter(coalesce(p.run_ids, []) || coalesce(a.run_ids, []), x -> x IS NOT NULL))) AS run_ids
FROM p
FULL JOIN a
  ON p.workload = a.workload AND p.point IS NOT DISTINCT FROM a.point AND p.suite IS NOT DISTINCT FROM a.suite
 AND p.backend IS NOT DISTINCT FROM a.backend;

-- harness_models(point_key, runs): harness_models_of's records, read from those the loader keeps
-- (harness_records) for the points of harness_point_keys() over every row, computed otherwise.
CREATE OR REPLACE MACRO harness_models(point_key, runs) AS TABLE
SELECT * EXCLUDE (point_key) FROM harness_records
WHERE runs IS NULL AND harness_records.point_key = coalesce(point_key, 'compiler')
UNION ALL BY NAME
SELECT * FROM harness_models_of(point_key, runs, NULL, NULL)
WHERE NOT harness_point_kept(point_key, runs);

-- harness_summary_of(point_key, runs): HUD's compiler dashboard, per (suite, point, mode, dtype,
-- backend, device, variant) (torchci/lib/benchmark/compilerUtils.ts), over the group's workloads (a
-- model each, harness_models: a metric's samples by its one rule): an aggregate over workloads, as
-- HUD's suite numbers are. eager, aot_eager and every other backend are groups of their own.
--   workloads            models of the group; passed_workloads: those that pass (harness_models)
--   pass_rate            passed_workloads / workloads
--   geomean_speedup      geometric mean of speedup over the workloads whose accuracy passes, speedup <> 0
--   compilation_latency  mean of compilation_latency (s) over those workloads, when <> 0
--   compression_ratio    mean of compression_ratio over those workloads, when <> 0
--   dynamo_peak_mem      mean over the workloads whose accuracy passes (GB)
-- A group without a single accuracy row (a job that ran --performance alone: accuracy_checked false)
-- has no pass rate (NULL, never 0) and its other numbers are over every workload that ran, as
-- geomean_speedup_all is always (every workload with a speedup > 0); in a group without a single
-- performance row (--accuracy alone) a workload passes on its accuracy.
-- runs, points, model_name: as harness_models_of's (NULL: every row, point and model). Macros take no
-- default parameters: DuckLake's catalog cannot hold one.
CREATE OR REPLACE MACRO harness_summary_of(point_key, runs, points, model_name) AS TABLE
WITH m AS (
    SELECT * REPLACE (CASE WHEN timed THEN passed ELSE accuracy_passed OR accuracy = 'pass_due_to_skip' END AS passed)
    FROM (SELECT *, bool_or(accuracy IS NOT NULL) OVER w AS checked, bool_or(speedup IS NOT NULL) OVER w AS timed
          FROM (SELECT * FROM harness_models(point_key, runs) WHERE model_name IS NULL
                UNION ALL BY NAME
                SELECT * FROM harness_models_of(point_key, runs, points, model_name) WHERE model_name IS NOT NULL)
          WHERE points IS NULL OR list_contains(points, point)
          WINDOW w AS (PARTITION BY suite, point, mode, dtype, backend, device, variant))
)
SELECT
    suite, point, mode, dtype, backend, device, variant,
    min(compiler_version) AS compiler_version,
    count(*) AS workloads,
    CASE WHEN bool_or(checked) THEN count(*) FILTER (WHERE passed) END AS passed_workloads,
    CASE WHEN bool_or(checked) THEN count(*) FILTER (WHERE passed)::DOUBLE / count(*) END AS pass_rate,
    -- ln of a positive speedup only: DuckDB computes an aggregate's argument before its FILTER, and
    -- a model the harness could not run has speedup 0. Each mean sums in workload order: a float sum
    -- in the order the rows came would differ in its last bits with the order runs were ingested
    exp(avg(ln(CASE WHEN speedup > 0 THEN speedup END) ORDER BY workload)
        FILTER (WHERE accuracy_passed OR NOT checked)) AS geomean_speedup,
    avg(compilation_latency ORDER BY workload)
        FILTER (WHERE (accuracy_passed OR NOT checked) AND compilation_latency <> 0) AS compilation_latency,
    avg(compression_ratio ORDER BY workload)
        FILTER (WHERE (accuracy_passed OR NOT checked) AND compression_ratio <> 0) AS compression_ratio,
    avg(dynamo_peak_mem ORDER BY workload) FILTER (WHERE accuracy_passed OR NOT checked) AS dynamo_peak_mem,
    exp(avg(ln(CASE WHEN speedup > 0 THEN speedup END) ORDER BY workload)) AS geomean_speedup_all,
    bool_or(checked) AS accuracy_checked,
    count(*) FILTER (WHERE accuracy IS NULL) AS workloads_without_accuracy,
    count(*) FILTER (WHERE speedup IS NULL) AS workloads_without_performance
FROM m
GROUP BY suite, point, mode, dtype, backend, device, variant;

-- harness_summary(point_key, runs): harness_summary_of's numbers, read from those the loader keeps
-- (harness_point_summaries) for the points of harness_point_keys() over every row, computed otherwise.
CREATE OR REPLACE MACRO harness_summary(point_key, runs) AS TABLE
SELECT * EXCLUDE (point_key) FROM harness_point_summaries
WHERE runs IS NULL AND harness_point_summaries.point_key = coalesce(point_key, 'compiler')
UNION ALL BY NAME
SELECT * FROM harness_summary_of(point_key, runs, NULL, NULL)
WHERE NOT harness_point_kept(point_key, runs);

-- HUD's flags of one model's metric from one point to the next (torchci's ModelPanel.tsx), used by
-- harness/point_models and harness/model_changes: hud_accuracy_flag says 'regression' when an accuracy
-- that passed (pass, pass_due_to_skip, eager_variation) fails, 'improvement' the other way round;
-- hud_flag(lower_is_better, before, now, threshold) says 'regression' when the value got worse by more
-- than threshold x before (a speedup that fell to 0: the model no longer runs), 'improvement' when it
-- got better by as much; nothing when either side is missing or the one before is 0 (not run).
CREATE OR REPLACE MACRO hud_accuracy_flag(before, now) AS
    CASE WHEN before IN ('pass', 'pass_due_to_skip', 'eager_variation')
              AND now NOT IN ('pass', 'pass_due_to_skip', 'eager_variation') THEN 'regression'
         WHEN before NOT IN ('pass', 'pass_due_to_skip', 'eager_variation')
              AND now IN ('pass', 'pass_due_to_skip', 'eager_variation') THEN 'improvement' END;

CREATE OR REPLACE MACRO hud_flag(lower_is_better, before, now, threshold) AS
    CASE WHEN coalesce(before, 0) = 0 OR now IS NULL OR now = before THEN NULL
         WHEN now = 0 THEN CASE WHEN lower_is_better THEN NULL ELSE 'regression' END
         WHEN (now - before) * CASE WHEN lower_is_better THEN 1 ELSE -1 END > threshold * before THEN 'regression'
         WHEN (before - now) * CASE WHEN lower_is_better THEN 1 ELSE -1 END > threshold * before THEN 'improvement' END;

-- harness_phase_times: the compilation-metrics CSVs long: seconds per dynamo_timed function, per
-- model row (the names are the release's own: a name missing in a release is a row missing).
CREATE OR REPLACE VIEW harness_phase_times AS
SELECT h.run_id, h.file, h.line, h.suite, h.mode, h.dtype, h.backend, h.device, h.model, h.workload, h.batch_size,
       h.compiler_version, h.started_at, h.labels, h.linked_run_id, k.phase,
       TRY_CAST(h.columns ->> k.phase AS DOUBLE) AS seconds
FROM harness_rows h,
     LATERAL (SELECT unnest(json_keys(h.columns)) AS phase) k
WHERE h.kind = 'compile_times' AND k.phase NOT IN ('dev', 'name', 'batch_size', 'tag');
