-- Where a model's benchmark-harness numbers changed from one point to the next, by HUD's per-model flags
-- Over a model's points (compiler versions in release order, or a label's values as text: the
-- nightlies) in each suite, backend and workload (harness_models: each point's samples by its
-- metric's one rule), every step where one of HUD's flags fires (hud_accuracy_flag, hud_flag:
-- accuracy that stopped or started passing, speedup, compilation latency or compression ratio moved
-- more than `relative`): the metric, its value before and after, and the flag. `iwh changes --metric
-- harness` lists these; harness/point_models shows a whole point. A set's own point (results of no
-- known release: harness_point_placed) is no step: nothing says what comes before it.
-- Measurements are noisy, so a step of speedup, compilation latency or compression ratio is judged as
-- `iwh compare` judges a workload's (analysis/regress.py): only with two samples or more at both
-- points, and only between two builds (repeats of one compiler version, under two nightly labels, are
-- noise of one build); a speedup that fell to 0 (the model no longer runs) and an accuracy flag are
-- exact and fire on one sample. graph_breaks: Dynamo's count as the harness wrote it (harness_models:
-- the latest accuracy row's, else performance row's, as run_metrics reads it), exact: more is a
-- regression, fewer an improvement.
-- @param model VARCHAR the model
-- @param key VARCHAR default=compiler what a point is: compiler (version) or a label key (nightly)
-- @param relative DOUBLE default=0.05 HUD's relative threshold
WITH series AS (
    SELECT *, dense_rank() OVER (PARTITION BY suite, backend, workload
                                 ORDER BY CASE WHEN coalesce($key, 'compiler') = 'compiler' THEN version_key(point) END,
                                          point) AS n
    FROM harness_models($key, NULL)
    WHERE model = $model AND harness_point_placed($key, compiler_version)
), stepped AS (
    SELECT s.suite, s.backend, s.workload, s.n AS position, b.point AS before_point, s.point,
           coalesce(b.performance_run_id, b.accuracy_run_id, b.run_ids[1]) AS before_run,
           coalesce(s.performance_run_id, s.accuracy_run_id, s.run_ids[1]) AS after_run,
           coalesce(b.performance_samples, b.accuracy_samples, 0) >= 2
               AND coalesce(s.performance_samples, s.accuracy_samples, 0) >= 2
               AND coalesce(b.compiler_version <> s.compiler_version, true) AS judged,
           [{'metric': 'accuracy', 'before': b.accuracy, 'after': s.accuracy,
             'flag': hud_accuracy_flag(b.accuracy, s.accuracy)},
            {'metric': 'speedup', 'before': b.speedup::VARCHAR, 'after': s.speedup::VARCHAR,
             'flag': CASE WHEN s.speedup = 0 OR judged THEN hud_flag(false, b.speedup, s.speedup, $relative) END},
            {'metric': 'compilation_latency', 'before': b.compilation_latency::VARCHAR,
             'after': s.compilation_latency::VARCHAR,
             'flag': CASE WHEN judged THEN hud_flag(true, b.compilation_latency, s.compilation_latency, $relative) END},
            {'metric': 'compression_ratio', 'before': b.compression_ratio::VARCHAR, 'after': s.compression_ratio::VARCHAR,
             'flag': CASE WHEN judged THEN hud_flag(false, b.compression_ratio, s.compression_ratio, $relative) END},
            {'metric': 'graph_breaks', 'before': b.graph_breaks::VARCHAR, 'after': s.graph_breaks::VARCHAR,
             'flag': CASE WHEN s.graph_breaks > b.graph_breaks THEN 'regression'
                          WHEN s.graph_breaks < b.graph_breaks THEN 'improvement' END}] AS metrics
    FROM series s
    JOIN series b ON b.suite IS NOT DISTINCT FROM s.suite AND b.backend IS NOT DISTINCT FROM s.backend
                 AND b.workload = s.workload AND b.n = s.n - 1
)
SELECT suite, backend, workload, position, before_point, point, m.metric, m.before, m.after, m.flag, before_run, after_run
FROM stepped, LATERAL (SELECT unnest(metrics) AS m)
WHERE m.flag IS NOT NULL
ORDER BY suite, backend, workload, position, m.metric;
