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
SELECT cause AS reason, events AS recompiles, in_model, in_packages, in_torch, in_stdlib, failed_guards, runs, workloads,
       models, model_list, example
FROM event_causes(MAP {'models': $model, 'compilers': $compiler}, 'recompile', $origin)
ORDER BY recompiles DESC, reason
LIMIT $limit;
