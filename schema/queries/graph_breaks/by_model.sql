-- Graph breaks per model x compiler version, by reason
-- One row per model, version and reason headline; models without graph breaks are absent.
-- @param model VARCHAR only this model
SELECT
    r.model,
    r.compiler_version,
    e.headline                                 AS reason,
    count(*)                                   AS graph_breaks,
    count(DISTINCT e.run_id)                   AS runs,
    string_agg(DISTINCT regexp_extract(e.user_file, '[^/]+$') || ':' || e.user_line, ' '
               ORDER BY regexp_extract(e.user_file, '[^/]+$') || ':' || e.user_line) AS user_frames
FROM compile_event_reasons e
JOIN runs r USING (run_id)
WHERE e.kind = 'graph_break'
  AND ($model IS NULL OR r.model = $model)
GROUP BY r.model, r.compiler_version, e.headline
ORDER BY r.model, version_key(compiler_version), compiler_version, graph_breaks DESC, reason;
