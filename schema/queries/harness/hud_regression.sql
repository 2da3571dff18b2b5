-- HUD's compiler regression rule over each suite's workloads: a comparison window of points against a baseline
-- For each suite, mode, dtype, backend, device and variant, each HUD metric (harness_summary: an
-- aggregate over the suite's workloads, a model each; base_workloads and head_workloads say how many,
-- the most of a window's points, and a suite that gained or lost models moves them) is aggregated
-- over the baseline window's points and over the comparison window's points (the median, by default,
-- or best = the best baseline point, as HUD's current configuration takes it), and the comparison
-- value is held against the baseline value times a threshold, as HUD's RegressionPolicy does
-- (aws/lambda/benchmark_regression_summary_report): pass rate >= 0.9 x, geomean speedup >= 0.95 x,
-- compression ratio >= 0.95 x, compilation latency <= 1.15 x the baseline. A metric with no value
-- on a side is insufficient_data, never a pass.
-- @param base VARCHAR baseline window: points, comma-separated (compiler versions or families: 2.13)
-- @param head VARCHAR comparison window: points, comma-separated
-- @param key VARCHAR default=compiler what a point is: compiler (version) or a label key (nightly)
-- @param aggregation VARCHAR default=median median | best (max, min for compilation latency)
-- @param pass_rate DOUBLE default=0.9 threshold: head pass rate >= base x this
-- @param geomean_speedup DOUBLE default=0.95 threshold: head geomean speedup >= base x this
-- @param compression_ratio DOUBLE default=0.95 threshold: head compression ratio >= base x this
-- @param compilation_latency DOUBLE default=1.15 threshold: head compilation latency <= base x this
WITH points AS (
    SELECT s.*,
           CASE WHEN EXISTS (SELECT 1 FROM unnest(string_split($base, ',')) t(v)
                             WHERE s.point = trim(v) OR (coalesce($key, 'compiler') = 'compiler' AND version_matches(s.point, trim(v))))
                THEN 'base'
                WHEN EXISTS (SELECT 1 FROM unnest(string_split($head, ',')) t(v)
                             WHERE s.point = trim(v) OR (coalesce($key, 'compiler') = 'compiler' AND version_matches(s.point, trim(v))))
                THEN 'head' END AS side
    FROM harness_summary($key, NULL) s
), long AS (
    -- one row per metric (an UNPIVOT, written as a join: read-only SQL takes plain SELECTs)
    SELECT suite, mode, dtype, backend, device, variant, side, point, workloads, m.metric,
           CASE m.metric WHEN 'pass_rate' THEN pass_rate WHEN 'geomean_speedup' THEN geomean_speedup
                         WHEN 'compression_ratio' THEN compression_ratio ELSE compilation_latency END AS value
    FROM points
    CROSS JOIN (VALUES ('pass_rate'), ('geomean_speedup'), ('compression_ratio'), ('compilation_latency')) m(metric)
    WHERE side IS NOT NULL
), windows AS (
    SELECT suite, mode, dtype, backend, device, variant, metric, side,
           count(value) AS points, max(workloads) AS workloads,
           CASE WHEN $aggregation = 'best' AND metric = 'compilation_latency' THEN min(value)
                WHEN $aggregation = 'best' THEN max(value)
                ELSE median(value) END AS value
    FROM long
    GROUP BY suite, mode, dtype, backend, device, variant, metric, side
), paired AS (
    SELECT coalesce(b.suite, h.suite) AS suite, coalesce(b.mode, h.mode) AS mode, coalesce(b.dtype, h.dtype) AS dtype,
           coalesce(b.backend, h.backend) AS backend, coalesce(b.device, h.device) AS device,
           coalesce(b.variant, h.variant) AS variant, coalesce(b.metric, h.metric) AS metric,
           b.value AS base, h.value AS head, coalesce(b.points, 0) AS base_points, coalesce(h.points, 0) AS head_points,
           b.workloads AS base_workloads, h.workloads AS head_workloads
    FROM (SELECT * FROM windows WHERE side = 'base') b
    FULL JOIN (SELECT * FROM windows WHERE side = 'head') h
      ON b.suite IS NOT DISTINCT FROM h.suite AND b.mode IS NOT DISTINCT FROM h.mode
     AND b.dtype IS NOT DISTINCT FROM h.dtype AND b.backend IS NOT DISTINCT FROM h.backend
     AND b.device IS NOT DISTINCT FROM h.device AND b.variant IS NOT DISTINCT FROM h.variant AND b.metric = h.metric
), judged AS (
    SELECT *,
           CASE metric WHEN 'pass_rate' THEN $pass_rate WHEN 'geomean_speedup' THEN $geomean_speedup
                       WHEN 'compression_ratio' THEN $compression_ratio ELSE $compilation_latency END AS threshold
    FROM paired
)
SELECT suite, mode, dtype, backend, device, variant, metric,
       round(base, 4) AS base, round(head, 4) AS head,
       round(base * threshold, 4) AS limit_value,
       CASE WHEN metric = 'compilation_latency' THEN 'head <= base x ' ELSE 'head >= base x ' END || threshold AS rule,
       base_points, head_points, base_workloads, head_workloads,
       CASE WHEN base IS NULL OR head IS NULL THEN 'insufficient_data'
            WHEN metric = 'compilation_latency' AND head > base * threshold THEN 'regression'
            WHEN metric <> 'compilation_latency' AND head < base * threshold THEN 'regression'
            ELSE 'no_regression' END AS verdict
FROM judged
ORDER BY suite, mode, dtype, backend, device, variant, metric;
