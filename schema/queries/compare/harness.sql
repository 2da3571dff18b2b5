-- Compare: the benchmark harness's numbers of the runs compared (its performance and accuracy rows)
-- @internal used by `iwh compare` and the Compare page
-- One row per run a harness row measured (views/61_harness.sql: harness_rows.linked_run_id), with
-- HUD's per-model columns: accuracy (the accuracy row's), speedup, compilation latency (s) and
-- compression ratio (the performance row's; compilation latency the accuracy row's where the run has
-- no performance row). A value of 0 says the harness failed to measure it: speedup stays 0 (HUD
-- counts it a failure), compilation latency and compression ratio are NULL, as HUD leaves them out.
-- @param runs VARCHAR run ids, comma-separated
SELECT linked_run_id AS run_id,
       any_value(suite) AS suite,
       any_value(accuracy) FILTER (WHERE kind = 'accuracy') AS accuracy,
       any_value(speedup) FILTER (WHERE kind = 'performance') AS speedup,
       coalesce(any_value(nullif(compilation_latency, 0)) FILTER (WHERE kind = 'performance'),
                any_value(nullif(compilation_latency, 0)) FILTER (WHERE kind = 'accuracy')) AS compilation_latency,
       any_value(nullif(compression_ratio, 0)) FILTER (WHERE kind = 'performance') AS compression_ratio
FROM harness_rows
WHERE kind IN ('performance', 'accuracy')
  AND linked_run_id IN (SELECT unnest(string_split($runs, ',')))
GROUP BY linked_run_id
ORDER BY linked_run_id;
