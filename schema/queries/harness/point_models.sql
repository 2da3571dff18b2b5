-- One point of a suite's series, model by model: each workload's numbers beside the point before and HUD's flags
-- HUD's model table (torchci's components/benchmark/compilers/ModelPanel.tsx) for one point of a
-- suite, backend, mode, dtype and device (harness_models: each workload's samples at a point by its
-- metric's one rule), each workload beside its record at the previous point of the same series
-- (releases in release order, a label's values as text: the nightly before; a set's own point, of
-- no known release, has none: harness_point_placed), with the deltas and
-- HUD's flags: accuracy that stopped passing is a regression (one that started, an improvement);
-- speedup down more than `relative` of the one before, or to 0 (the model no longer runs), is a
-- regression, up more than that an improvement; compilation latency and absolute latency up more
-- than `relative` regress, down improve; compression ratio as speedup, and below `compression` a
-- warning; compiled peak memory up more than `memory` regresses. A metric 0 or missing at the previous
-- point is not flagged. flags: the metrics that regressed, then those that improved (+) or warn (!).
-- Run ids are the compiles the rows measured, for the Run explorer (explorer?run=ID).
-- @param key VARCHAR default=compiler what a point is: compiler (version) or a label key (nightly)
-- @param point VARCHAR the point (a compiler version, a label value, a set's own); NULL: the series' latest
-- @param suite VARCHAR the suite
-- @param backend VARCHAR only this backend
-- @param mode VARCHAR only this mode (infer, train)
-- @param dtype VARCHAR only this dtype
-- @param device VARCHAR only this device
-- @param relative DOUBLE default=0.05 HUD's relative threshold for speedup, latencies, compression ratio
-- @param memory DOUBLE default=0.2 HUD's relative threshold for peak memory
-- @param compression DOUBLE default=0.9 HUD's warning: a compression ratio below this
WITH series AS (
    SELECT * FROM harness_models($key, NULL)
    WHERE ($suite IS NULL OR suite = $suite) AND ($backend IS NULL OR backend = $backend)
      AND ($mode IS NULL OR mode = workload_value('mode', $mode))
      AND ($dtype IS NULL OR dtype = workload_value('dtype', $dtype)) AND ($device IS NULL OR device = $device)
), points AS (
    -- the placed points in order, then the sets' own (harness_point_placed), each after none
    SELECT point, placed,
           row_number() OVER (ORDER BY NOT placed, CASE WHEN coalesce($key, 'compiler') = 'compiler' THEN version_key(point) END,
                                       point) AS n
    FROM (SELECT point, bool_and(harness_point_placed($key, compiler_version)) AS placed
          FROM series WHERE point IS NOT NULL GROUP BY point)
), here AS (
    SELECT coalesce((SELECT n FROM points WHERE point = $point),
                    (SELECT max(n) FROM points WHERE placed), (SELECT max(n) FROM points)) AS n
), now_ AS (
    SELECT s.* FROM series s JOIN points p USING (point) WHERE p.n = (SELECT n FROM here)
), before AS (
    SELECT s.* FROM series s JOIN points p USING (point)
    WHERE p.placed AND p.n = (SELECT n FROM here) - 1 AND (SELECT placed FROM points WHERE n = (SELECT n FROM here))
), paired AS (
    SELECT c.*, b.point AS before_point, b.accuracy AS before_accuracy, b.speedup AS before_speedup,
           b.compilation_latency AS before_compilation_latency, b.compression_ratio AS before_compression_ratio,
           b.abs_latency AS before_abs_latency, b.dynamo_peak_mem AS before_dynamo_peak_mem,
           b.workload IS NULL AS new
    FROM now_ c
    LEFT JOIN before b ON b.workload = c.workload AND b.backend IS NOT DISTINCT FROM c.backend
                      AND b.suite IS NOT DISTINCT FROM c.suite
), flagged AS (
    SELECT *,
        hud_accuracy_flag(before_accuracy, accuracy) AS accuracy_flag,
        hud_flag(false, before_speedup, speedup, $relative) AS speedup_flag,
        hud_flag(true, before_compilation_latency, nullif(compilation_latency, 0), $relative) AS compilation_latency_flag,
        coalesce(hud_flag(false, before_compression_ratio, nullif(compression_ratio, 0), $relative),
                 CASE WHEN before_compression_ratio > 0 AND compression_ratio > 0 AND compression_ratio < $compression
                      THEN 'warning' END)
            AS compression_ratio_flag,
        hud_flag(true, before_abs_latency, nullif(abs_latency, 0), $relative) AS abs_latency_flag,
        hud_flag(true, before_dynamo_peak_mem, nullif(dynamo_peak_mem, 0), $memory) AS dynamo_peak_mem_flag
    FROM paired
)
SELECT suite, point, before_point, backend, mode, dtype, device, variant, model, workload, batch_size,
       array_to_string(list_filter([
           CASE WHEN accuracy_flag = 'regression' THEN 'accuracy' END,
           CASE WHEN speedup_flag = 'regression' THEN 'speedup' END,
           CASE WHEN compilation_latency_flag = 'regression' THEN 'compilation_latency' END,
           CASE WHEN compression_ratio_flag = 'regression' THEN 'compression_ratio' END,
           CASE WHEN abs_latency_flag = 'regression' THEN 'abs_latency' END,
           CASE WHEN dynamo_peak_mem_flag = 'regression' THEN 'dynamo_peak_mem' END,
           CASE WHEN accuracy_flag = 'improvement' THEN '+accuracy' END,
           CASE WHEN speedup_flag = 'improvement' THEN '+speedup' END,
           CASE WHEN compilation_latency_flag = 'improvement' THEN '+compilation_latency' END,
           CASE WHEN compression_ratio_flag = 'improvement' THEN '+compression_ratio' END,
           CASE WHEN compression_ratio_flag = 'warning' THEN '!compression_ratio' END], x -> x IS NOT NULL), ' ')
           AS flags,
       new, before_accuracy, accuracy, passed,
       before_speedup, speedup, round(speedup - before_speedup, 4) AS speedup_delta,
       before_compilation_latency AS before_compilation_latency_s, compilation_latency AS compilation_latency_s,
       round(compilation_latency - before_compilation_latency, 3) AS compilation_latency_delta_s,
       before_compression_ratio, compression_ratio, round(compression_ratio - before_compression_ratio, 4) AS compression_ratio_delta,
       round(abs_latency, 4) AS abs_latency_ms, round(dynamo_peak_mem, 3) AS dynamo_peak_mem_gb,
       accuracy_flag, speedup_flag, compilation_latency_flag, compression_ratio_flag, abs_latency_flag,
       dynamo_peak_mem_flag, performance_samples, accuracy_samples, performance_run_id, accuracy_run_id
FROM flagged
ORDER BY accuracy_flag = 'regression' DESC NULLS LAST, speedup_flag = 'regression' DESC NULLS LAST,
         flags = '' , suite, backend, workload;
