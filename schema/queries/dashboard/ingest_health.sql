-- Ingest health: problems met while ingesting, per source kind and severity
-- `example` is one message of the group; errors without a run (unreadable paths) count under run_id NULL.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
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
    e.kind,
    e.severity,
    count(*)                    AS problems,
    count(DISTINCT e.run_id)    AS runs,
    count(DISTINCT e.path)      AS files,
    min(e.message)              AS example
FROM ingest_errors e
WHERE e.run_id IN (SELECT run_id FROM picked)
   OR (e.run_id IS NULL AND $compilers IS NULL AND $models IS NULL AND $devices IS NULL AND $labels IS NULL)
GROUP BY ALL
ORDER BY problems DESC, e.kind, e.severity;
