-- Graph breaks: top reasons across runs
-- Grouped by the reason's headline (views/30_compile_event_reasons.sql); the most frequent user frame
-- is the place to look first.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only this compiler version
-- @param limit INTEGER default=20 at most this many reasons
SELECT
    e.headline                                 AS reason,
    count(*)                                   AS graph_breaks,
    count(DISTINCT e.run_id)                   AS runs,
    count(DISTINCT r.model)                    AS models,
    mode(regexp_extract(e.user_file, '[^/]+$') || ':' || e.user_line) AS top_user_frame
FROM compile_event_reasons e
JOIN runs r USING (run_id)
WHERE e.kind = 'graph_break'
  AND ($model IS NULL OR r.model = $model)
  AND ($compiler IS NULL OR r.compiler_version = $compiler)
GROUP BY ALL
ORDER BY graph_breaks DESC, reason
LIMIT $limit;
