-- Why a run's compile-event counts are unknown: its unknown_* rows, one line a kind
-- @internal used by the Run explorer page
-- A log that cannot tell a count writes a row saying so (compile_events.kind unknown_break,
-- unknown_uncounted, unknown_recompile: ingest/parsers/trace_breaks.py); they are notes, not events.
-- `metric` is the run_metrics count each speaks of and `counted` its value there: NULL (unknown), or
-- the count another file of the run gave (`counted_by`: the run's TORCH_LOGS tell its recompiles, the
-- benchmark harness's CSV its graph breaks; views/15_run_rollups_of.sql). `reason`: the first row's.
-- @param run_id VARCHAR the run
SELECT
    e.kind,
    CASE e.kind WHEN 'unknown_break' THEN 'graph_breaks' WHEN 'unknown_uncounted' THEN 'uncounted_breaks'
                ELSE 'recompiles' END                                              AS metric,
    any_value(CASE e.kind WHEN 'unknown_break' THEN m.graph_breaks WHEN 'unknown_uncounted' THEN m.uncounted_breaks
                          ELSE m.recompiles END)                                   AS counted,
    CASE e.kind WHEN 'unknown_break' THEN 'the benchmark harness''s count' WHEN 'unknown_recompile' THEN 'TORCH_LOGS'
                END                                                                AS counted_by,
    count(*)                                                                       AS rows,
    min(e.reason ORDER BY e.compile_id NULLS LAST, e.reason)                       AS reason
FROM compile_events e
JOIN run_metrics m USING (run_id)
WHERE e.run_id = $run_id AND e.kind LIKE 'unknown\_%' ESCAPE '\'
GROUP BY e.kind
ORDER BY e.kind;
