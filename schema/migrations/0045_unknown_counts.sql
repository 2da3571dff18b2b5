-- Counts the source never gave are NULL, not 0 (views/15_run_rollups_of.sql): the kernel counts of a
-- run whose output code never came (killed mid-compile, an export) or that holds no file they are read
-- from; the compile events of a run of benchmark-harness results alone (its graph breaks are the
-- harness's own count); the uncounted breaks of a log of a release before 2.6, which records no
-- data-dependent branch (an unknown_uncounted row says why: ingest/parsers/trace_breaks.py).
-- Runs written before hold no unknown_uncounted rows. Those whose log is known to leave them unknown
-- get one: a restart whose break the log cannot tell (an unknown_break, but a reason given twice, which
-- is a counted break), or compiles of resume frames outnumbering the breaks counted. Every rollup is
-- made again by the migration's caller: the rules change for runs of every kind.
INSERT INTO compile_events (run_id, compile_id, kind, reason, source, run_key)
SELECT r.run_id, NULL, 'unknown_uncounted',
       'ingested before the uncounted breaks of releases before 2.6 were told unknown: ingest the log again (iwh ingest --force)',
       'torch_trace', r.run_key
FROM runs r
WHERE r.run_id NOT IN (SELECT run_id FROM compile_events WHERE kind = 'uncounted_break')
  AND (r.run_id IN (SELECT run_id FROM compile_events
                    WHERE kind = 'unknown_break' AND coalesce(reason, '') NOT LIKE '%distinct reasons%')
       OR r.run_id IN (SELECT c.run_id FROM compilations c
                       WHERE c.record_kind = 'compilation_metrics' AND (c.record::JSON -> 'log_format_version') IS NULL
                       GROUP BY c.run_id
                       HAVING count(DISTINCT c.co_name) FILTER (WHERE starts_with(c.co_name, 'torch_dynamo_resume_in_'))
                              > (SELECT count(*) FROM compile_events b WHERE b.run_id = c.run_id AND b.kind = 'graph_break')));

DELETE FROM run_rollups;
