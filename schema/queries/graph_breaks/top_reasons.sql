-- Graph breaks: top causes across runs
-- Graph breaks as Dynamo counts them (its counters["graph_break"], the harness's graph_breaks), grouped
-- by cause across releases (views/31_compile_event_reasons.sql: Dynamo's registry id, pre-registry
-- messages mapped onto it, else the normalised reason). `in_model` .. `in_stdlib` say where they
-- happened (compile_events.origin: the model's own code, an installed package such as transformers
-- or timm, torch, the standard library); every one counts. The most frequent user frame is the place
-- to look first.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only this compiler version
-- @param origin VARCHAR only events whose code lives there: model, package, torch or stdlib
-- @param limit INTEGER default=20 at most this many causes
SELECT
    e.cause,
    min(e.cause_title)                         AS reason,
    count(*)                                   AS graph_breaks,
    count(*) FILTER (WHERE e.origin = 'model')   AS in_model,
    count(*) FILTER (WHERE e.origin = 'package') AS in_packages,
    count(*) FILTER (WHERE e.origin = 'torch')   AS in_torch,
    count(*) FILTER (WHERE e.origin = 'stdlib')  AS in_stdlib,
    count(DISTINCT e.run_id)                   AS runs,
    count(DISTINCT r.workload)                 AS workloads,
    count(DISTINCT r.model)                    AS models,
    mode(regexp_extract(e.user_file, '[^/]+$') || ':' || e.user_line) AS top_user_frame
FROM compile_event_reasons e
JOIN run_workloads r USING (run_id)
WHERE e.kind = 'graph_break'
  AND r.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model, 'compilers': $compiler}))
  AND ($origin IS NULL OR e.origin = $origin)
GROUP BY e.cause
ORDER BY graph_breaks DESC, e.cause
LIMIT $limit;
