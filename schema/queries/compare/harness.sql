-- Compare: the benchmark harness's rows of the runs compared (its performance and accuracy rows)
-- @internal used by `iwh compare` and the Compare page
-- One row per harness row (views/61_harness.sql: harness_rows) that measured one of the runs
-- (linked_run_id) or that one of them holds (run_id: a run of harness results alone), with what
-- pairs it across the sides (suite, backend, kind, the model's workload parts: device, mode, dtype and
-- the holding run's variant, as harness_rows.workload) and HUD's per-model columns: accuracy, speedup, compilation latency (s) and compression
-- ratio. A value of 0 says the harness failed to measure it: speedup stays 0 (HUD counts it a
-- failure), compilation latency and compression ratio are NULL, as HUD leaves them out. Each
-- metric's samples are judged by its one rule (analysis/regress.py, views/61_harness.sql's
-- harness_models). graph_breaks: Dynamo's counter as the harness wrote it, which a run of harness
-- results alone holds as its run_metrics.graph_breaks, a workload once (analysis/hud.py reads it so).
-- @param runs VARCHAR run ids, comma-separated
WITH picked AS (SELECT unnest(string_split($runs, ',')) AS run_id)
SELECT run_id AS holder_run_id, linked_run_id, kind, suite, backend, model, device, mode, dtype,
       labels ->> 'variant' AS variant, workload, file, line,
       accuracy, graph_breaks, speedup, nullif(compilation_latency, 0) AS compilation_latency,
       nullif(compression_ratio, 0) AS compression_ratio
FROM harness_rows
WHERE kind IN ('performance', 'accuracy')
  AND (linked_run_id IN (SELECT run_id FROM picked) OR run_id IN (SELECT run_id FROM picked))
ORDER BY suite, backend, model, kind, run_id, file, line;
