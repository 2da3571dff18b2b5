-- CI's graph-break gate: Dynamo's counters of each workload against expected values
-- PyTorch CI's rule (benchmarks/dynamo/check_graph_breaks.py): per workload (harness_rows.workload: the
-- model, mode, dtype, device and variant) of the head point's accuracy rows, its latest row
-- (release_order), graph_breaks and fallbacks_to_eager may not rise, calls_captured and unique_graphs
-- may not fall, against the expected values: the same workload's latest accuracy row at the base
-- point, or (base not given) the model's row in the ci_expected_accuracy CSVs ingested (kind expected:
-- matched by model, suite, mode, backend, device and dtype where the file names them, PyTorch's naming
-- no dtype and torch-xpu-ops' a dtype a column; one file a workload, the one naming the workload's
-- device and backend first; `expected` picks one file by a part of its name).
-- A counter missing on either side is not checked; a model with no expected graph_breaks is MISSING,
-- one whose unique_graphs is 0 (Dynamo never ran: eager failed) EAGER_FAILED. status: FAIL when any
-- counter got worse, else IMPROVED when any got better, else PASS.
-- @param head VARCHAR the point checked (a compiler version or family, or a label value with key)
-- @param base VARCHAR the point whose counters are expected; NULL: the ingested expected CSVs
-- @param key VARCHAR default=compiler what a point is: compiler (version) or a label key
-- @param expected VARCHAR only expected CSVs whose file name contains this (e.g. cpu_inductor_timm_inference)
-- @param suite VARCHAR only this suite
WITH rows_at AS (
    SELECT *, harness_point($key, compiler_version, labels ->> $key, harness_set_point(labels, run_id)) AS point,
           labels ->> 'variant' AS variant
    FROM harness_rows
), pick AS (
    SELECT r.*, CASE WHEN r.kind = 'accuracy' AND (r.point = $head OR (coalesce($key, 'compiler') = 'compiler' AND version_matches(r.point, $head))) THEN 'actual'
                     WHEN $base IS NOT NULL AND r.kind = 'accuracy' AND (r.point = $base OR (coalesce($key, 'compiler') = 'compiler' AND version_matches(r.point, $base))) THEN 'expected'
                     WHEN $base IS NULL AND r.kind = 'expected' AND ($expected IS NULL OR contains(r.file, $expected)) THEN 'expected' END AS side
    FROM rows_at r
    WHERE $suite IS NULL OR r.suite = $suite
), latest AS (
    SELECT * FROM pick WHERE side IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY side, suite, backend, workload
                               ORDER BY release_order(compiler_version, started_at) DESC, run_id DESC,
                                        file DESC, line DESC) = 1
), actual AS (SELECT * FROM latest WHERE side = 'actual'),
   expected AS (SELECT * FROM latest WHERE side = 'expected'),
paired AS (
    SELECT a.suite, a.mode, a.dtype, a.backend, a.device, a.variant, a.model, a.workload, a.linked_run_id AS run_id,
           a.graph_breaks, e.graph_breaks AS expected_graph_breaks,
           a.fallbacks_to_eager, e.fallbacks_to_eager AS expected_fallbacks_to_eager,
           a.calls_captured, e.calls_captured AS expected_calls_captured,
           a.unique_graphs, e.unique_graphs AS expected_unique_graphs,
           e.model IS NOT NULL AS has_expected
    FROM actual a
    LEFT JOIN expected e
      ON e.model = a.model AND (e.suite IS NULL OR a.suite IS NULL OR e.suite = a.suite)
     AND CASE WHEN $base IS NULL THEN (e.mode IS NULL OR a.mode IS NULL OR e.mode = a.mode)
                                      AND (e.backend IS NULL OR a.backend IS NULL OR e.backend = a.backend)
                                      AND (e.device IS NULL OR a.device IS NULL OR e.device = a.device)
                                      AND (e.dtype IS NULL OR a.dtype IS NULL OR e.dtype = a.dtype)
              ELSE e.workload = a.workload AND e.backend IS NOT DISTINCT FROM a.backend END
    -- one expected file a workload, as CI reads its own config's: the one naming its device and
    -- backend over one naming neither (cpu_inductor_timm_inference.csv over inductor_timm_inference.csv)
    QUALIFY row_number() OVER (PARTITION BY a.suite, a.backend, a.workload
                               ORDER BY e.device IS NOT DISTINCT FROM a.device DESC,
                                        e.backend IS NOT DISTINCT FROM a.backend DESC, e.run_id, e.file, e.line) = 1
), checked AS (
    SELECT *,
           -- CI's TRACKED_METRICS: (counter, lower is better); worse = FAIL, better = IMPROVED
           [CASE WHEN graph_breaks > expected_graph_breaks THEN 'graph_breaks=' || graph_breaks || ', expected=' || expected_graph_breaks END,
            CASE WHEN calls_captured < expected_calls_captured THEN 'calls_captured=' || calls_captured || ', expected=' || expected_calls_captured END,
            CASE WHEN unique_graphs < expected_unique_graphs THEN 'unique_graphs=' || unique_graphs || ', expected=' || expected_unique_graphs END,
            CASE WHEN fallbacks_to_eager > expected_fallbacks_to_eager THEN 'fallbacks_to_eager=' || fallbacks_to_eager || ', expected=' || expected_fallbacks_to_eager END
           ] AS worse,
           [CASE WHEN graph_breaks < expected_graph_breaks THEN 'graph_breaks=' || graph_breaks || ', expected=' || expected_graph_breaks END,
            CASE WHEN calls_captured > expected_calls_captured THEN 'calls_captured=' || calls_captured || ', expected=' || expected_calls_captured END,
            CASE WHEN unique_graphs > expected_unique_graphs THEN 'unique_graphs=' || unique_graphs || ', expected=' || expected_unique_graphs END,
            CASE WHEN fallbacks_to_eager < expected_fallbacks_to_eager THEN 'fallbacks_to_eager=' || fallbacks_to_eager || ', expected=' || expected_fallbacks_to_eager END
           ] AS better
    FROM paired
)
SELECT suite, mode, dtype, backend, device, variant, model, workload,
       CASE WHEN expected_graph_breaks IS NULL THEN 'MISSING'
            WHEN coalesce(unique_graphs, 0) = 0 THEN 'EAGER_FAILED'
            WHEN len(list_filter(worse, x -> x IS NOT NULL)) > 0 THEN 'FAIL'
            WHEN len(list_filter(better, x -> x IS NOT NULL)) > 0 THEN 'IMPROVED'
            ELSE 'PASS' END AS status,
       array_to_string(list_filter(worse, x -> x IS NOT NULL), '; ') AS regressed,
       array_to_string(list_filter(better, x -> x IS NOT NULL), '; ') AS improved,
       graph_breaks, expected_graph_breaks, calls_captured, expected_calls_captured,
       unique_graphs, expected_unique_graphs, fallbacks_to_eager, expected_fallbacks_to_eager, run_id
FROM checked
ORDER BY status = 'PASS', suite, workload, backend;
