-- The runs behind one compile-event reason: where it happened and the full reason text
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
-- @param kind VARCHAR default=graph_break graph_break, recompile, restart or failure
-- @param reason VARCHAR the headline (as in dashboard/break_reasons)
-- @param limit INTEGER default=200 at most this many events
WITH picked AS (
    SELECT r.*
    FROM runs r
    WHERE ($compilers IS NULL OR list_contains(string_split($compilers, ','), r.compiler_version))
      AND ($models IS NULL OR list_contains(string_split($models, ','), r.model))
      AND ($devices IS NULL OR list_contains(string_split($devices, ','), r.device))
      AND ($labels IS NULL OR NOT EXISTS (
            SELECT 1
            FROM (SELECT split_part(l, '=', 1) AS k, list(substr(l, strpos(l, '=') + 1)) AS vs
                  FROM unnest(string_split($labels, ',')) AS t(l) GROUP BY 1) AS want
            WHERE NOT coalesce(list_contains(want.vs, r.labels ->> want.k), false)))
)
SELECT
    p.model,
    p.compiler_version,
    p.device,
    e.compile_id,
    e.user_file,
    e.user_line,
    e.reason,
    e.run_id
FROM compile_event_reasons e
JOIN picked p USING (run_id)
WHERE e.kind = $kind AND e.headline = $reason
ORDER BY version_key(p.compiler_version), p.compiler_version, p.model, e.run_id, e.compile_id
LIMIT $limit;
