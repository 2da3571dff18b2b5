-- Recompiles: top causes (the kind of guard that failed), across runs
-- A recompile counts once however many cached entries' guards failed (their texts are in
-- compile_events.details); its cause is the kind of the first failed guard (compile_events.cause_id:
-- tensor size mismatch, object identity, dynamic shape, ...; views/31_compile_event_reasons.sql), so
-- one cause groups across runs and releases; `example` is one such guard, normalised. `in_model` ..
-- `in_stdlib` say where the recompiled frame's code lives (compile_events.origin); every one counts.
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only this compiler version
-- @param origin VARCHAR only events whose code lives there: model, package, torch or stdlib
-- @param limit INTEGER default=20 at most this many causes
SELECT
    e.cause                                    AS reason,
    count(*)                                   AS recompiles,
    count(*) FILTER (WHERE e.origin = 'model')   AS in_model,
    count(*) FILTER (WHERE e.origin = 'package') AS in_packages,
    count(*) FILTER (WHERE e.origin = 'torch')   AS in_torch,
    count(*) FILTER (WHERE e.origin = 'stdlib')  AS in_stdlib,
    sum(len(e.details))::BIGINT                AS failed_guards,
    count(DISTINCT e.run_id)                   AS runs,
    count(DISTINCT r.workload)                 AS workloads,
    count(DISTINCT r.model)                    AS models,
    string_agg(DISTINCT r.model, ' ' ORDER BY r.model) AS model_list,
    min(e.normalised)                          AS example
FROM compile_event_reasons e
JOIN run_workloads r USING (run_id)
WHERE e.kind = 'recompile'
  AND r.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model, 'compilers': $compiler}))
  AND ($origin IS NULL OR e.origin = $origin)
GROUP BY e.cause
ORDER BY recompiles DESC, reason
LIMIT $limit;
