-- Recompiles: top reasons (the guard that failed)
-- Grouped by the reason's headline (views/30_compile_event_reasons.sql), without the id of the
-- cache entry whose guard failed.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only this compiler version
-- @param limit INTEGER default=20 at most this many reasons
SELECT
    e.headline                                 AS reason,
    count(*)                                   AS recompiles,
    count(DISTINCT e.run_id)                   AS runs,
    count(DISTINCT r.model)                    AS models,
    string_agg(DISTINCT r.model, ' ' ORDER BY r.model) AS model_list
FROM compile_event_reasons e
JOIN runs r USING (run_id)
WHERE e.kind = 'recompile'
  AND ($model IS NULL OR r.model = $model)
  AND ($compiler IS NULL OR r.compiler_version = $compiler)
GROUP BY ALL
ORDER BY recompiles DESC, reason
LIMIT $limit;
