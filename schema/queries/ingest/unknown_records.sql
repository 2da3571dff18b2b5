-- Trace records no release the catalog covers writes (a new release's new artifacts)
-- One row per record kind and name the warehouse's catalog (ingest/catalog.py, docs/trace_records.md)
-- does not know: how many records, in how many runs, of which compiler versions, and a run to look at.
-- They are counted, not errors; an empty result means every record of every run was known.
-- @param compiler VARCHAR only runs of this compiler version (prefix, e.g. 2.15)
SELECT
    t.record_kind,
    t.name,
    CAST(sum(t.n) AS BIGINT)                                AS records,
    count(DISTINCT t.run_id)                                AS runs,
    string_agg(DISTINCT r.compiler_version, ', ' ORDER BY r.compiler_version) AS compiler_versions,
    min(t.run_id)                                           AS example_run
FROM trace_records t
JOIN runs r USING (run_id)
WHERE t.handling = 'unknown'
  AND ($compiler IS NULL OR starts_with(r.compiler_version, $compiler))
GROUP BY ALL
ORDER BY records DESC, t.record_kind, t.name;
