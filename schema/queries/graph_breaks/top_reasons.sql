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
SELECT cause, reason, events AS graph_breaks, in_model, in_packages, in_torch, in_stdlib, runs, workloads, models,
       top_user_frame
FROM event_causes(MAP {'models': $model, 'compilers': $compiler}, 'graph_break', $origin)
ORDER BY graph_breaks DESC, cause
LIMIT $limit;
