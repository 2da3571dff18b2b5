-- Graph breaks: top causes across runs
-- Grouped by cause (views/31_compile_event_reasons.sql: Dynamo's registry id, else the normalised
-- reason); `library_graph_breaks` are those in library frames (torch, packages, the standard
-- library). The most frequent user frame is the place to look first.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only this compiler version
-- @param limit INTEGER default=20 at most this many causes
SELECT
    e.cause,
    min(e.normalised)                          AS reason,
    count(*)                                   AS graph_breaks,
    count(*) FILTER (WHERE e.in_library)       AS library_graph_breaks,
    count(DISTINCT e.run_id)                   AS runs,
    count(DISTINCT r.workload)                 AS workloads,
    count(DISTINCT r.model)                    AS models,
    mode(regexp_extract(e.user_file, '[^/]+$') || ':' || e.user_line) AS top_user_frame
FROM compile_event_reasons e
JOIN run_workloads r USING (run_id)
WHERE e.kind = 'graph_break'
  AND r.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model, 'compilers': $compiler}))
GROUP BY e.cause
ORDER BY graph_breaks DESC, e.cause
LIMIT $limit;
