-- Trace records no release the catalog covers writes (a new release's new artifacts), summed over workloads
-- One row per record kind and name the warehouse's catalog (ingest/parsers/trace_records.py, docs/trace_records.md)
-- does not know: how many records in every run of every workload (records_all_workloads), in how many
-- runs and workloads, of which compiler versions, and a run to look at. What a log holds depends on
-- the release that wrote it, not on the workload, so the count is over them all. They are counted,
-- not errors, and each is kept whole (trace_records' line, compile_id, metadata, payload of the
-- handling 'unknown' rows); an empty result means every record of every run was known.
-- @param compiler VARCHAR only runs of this compiler version (prefix, e.g. 2.15)
SELECT
    t.record_kind,
    t.name,
    CAST(sum(t.n) AS BIGINT)                                AS records_all_workloads,
    count(DISTINCT t.run_id)                                AS runs,
    count(DISTINCT r.workload)                              AS workloads,
    string_agg(DISTINCT r.compiler_version, ', ' ORDER BY r.compiler_version) AS compiler_versions,
    min(t.run_id)                                           AS example_run
FROM trace_records t
JOIN run_workloads r USING (run_id)
WHERE t.handling = 'unknown'
  AND r.run_id IN (SELECT run_id FROM picked_runs(MAP {'compilers': $compiler}))
GROUP BY ALL
ORDER BY records_all_workloads DESC, t.record_kind, t.name;
