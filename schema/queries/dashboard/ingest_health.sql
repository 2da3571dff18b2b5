-- Ingest health: problems met while ingesting, per source kind and severity
-- @internal used by the dashboards' pages
-- `example` is one message of the group; errors without a run (unreadable paths) count under run_id NULL.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
WITH picked AS (
    SELECT * FROM picked_runs(MAP {'compilers': $compilers, 'models': $models, 'devices': $devices, 'labels': $labels})
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
