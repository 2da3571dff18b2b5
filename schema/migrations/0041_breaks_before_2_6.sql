-- Graph breaks of TORCH_TRACE logs from releases before 2.6, which write no graph-break record: the
-- parser now reads the breaks Dynamo counted from compilation_metrics' restart_reasons, and writes an
-- unknown_break where the log cannot tell (ingest/parsers/trace_breaks.py); a run with one has
-- graph_breaks NULL, unknown, where it had a confident 0 (views/15_run_rollups_of.sql).
-- Runs written before hold no such rows. Those whose breaks may be missing (a pre-2.6 compile that
-- restarted or failed, or a 2.3 log, without compilation_metrics, with a graph written after a
-- restart) get one unknown_break saying to ingest the log again (`iwh ingest --force`); their
-- rollups are made again by the migration's caller. Runs with a graph-break record are 2.6 or later.
INSERT INTO compile_events (run_id, compile_id, kind, reason, source, run_key)
SELECT r.run_id, NULL, 'unknown_break',
       'ingested before graph breaks were read from the restarts of releases before 2.6: ingest the log again (iwh ingest --force)',
       'torch_trace', r.run_key
FROM runs r
WHERE r.run_id NOT IN (SELECT run_id FROM compile_events WHERE kind IN ('graph_break', 'uncounted_break'))
  AND (r.run_id IN (SELECT run_id FROM compilations
                    WHERE record_kind = 'compilation_metrics'
                      AND (record::JSON -> 'log_format_version') IS NULL
                      AND (len(restart_reasons) > 0 OR fail_type IS NOT NULL))
       OR (r.run_id NOT IN (SELECT run_id FROM compilations)
           AND r.run_id IN (SELECT run_id FROM graphs WHERE regexp_matches(compile_id, '^[0-9]+/[0-9]+_[0-9]+$'))));

DELETE FROM run_rollups WHERE run_id IN (SELECT run_id FROM compile_events WHERE kind = 'unknown_break');
