-- Ingest errors, newest first, with the run and file they belong to
-- @internal used by the dashboards' pages
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
-- @param limit INTEGER default=100 at most this many errors
-- @param offset INTEGER default=0 skip this many errors (paging)
WITH picked AS (
    SELECT * FROM picked_runs(MAP {'compilers': $compilers, 'models': $models, 'devices': $devices, 'labels': $labels})
)
SELECT
    p.model,
    p.compiler_version,
    e.kind,
    e.severity,
    e.path,
    e.line,
    e.message,
    e.run_id,
    e.ingested_at
FROM ingest_errors e
LEFT JOIN picked p USING (run_id)
WHERE p.run_id IS NOT NULL
   OR (e.run_id IS NULL AND $compilers IS NULL AND $models IS NULL AND $devices IS NULL AND $labels IS NULL)
ORDER BY e.ingested_at DESC, e.path, e.line, e.run_id, e.kind, e.severity, e.message
LIMIT $limit OFFSET $offset;
