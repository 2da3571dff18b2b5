-- Runs whose ingest recorded problems (errors and warnings)
-- One row per run: counts by severity, the source kinds involved and the first message (by path
-- and line); `iwh sql "SELECT * FROM ingest_errors WHERE run_id = '...'"` shows them all.
-- @param severity VARCHAR only problems of this severity (error, warning)
SELECT
    r.model,
    r.compiler_version,
    e.run_id,
    count(*) FILTER (WHERE e.severity = 'error')   AS errors,
    count(*) FILTER (WHERE e.severity = 'warning') AS warnings,
    string_agg(DISTINCT e.kind, ' ' ORDER BY e.kind) AS kinds,
    arg_min(e.path || coalesce(':' || e.line, '') || ': ' || e.message,
            (e.path, coalesce(e.line, 0), e.message))  AS first_problem
FROM ingest_errors e
LEFT JOIN runs r USING (run_id)
WHERE ($severity IS NULL OR e.severity = $severity)
GROUP BY ALL
ORDER BY errors DESC, warnings DESC, r.model NULLS LAST, r.compiler_version, e.run_id;
