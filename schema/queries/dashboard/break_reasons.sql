-- Graph breaks, recompiles, restarts and failures: causes ranked across runs
-- @internal used by the dashboards' pages
-- Grouped by cause (views/31_compile_event_reasons.sql: Dynamo's registry id, pre-registry messages
-- mapped onto it, a recompile's guard kind, else the normalised reason); `reason` is the registry's
-- title of the cause (else one normalised reason of the group). `in_model` .. `in_stdlib`: where
-- they happened (compile_events.origin); every one counts.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
-- @param kind VARCHAR default=graph_break graph_break, uncounted_break, recompile, restart or failure
-- @param origin VARCHAR only events whose code lives there: model, package, torch or stdlib
-- @param limit INTEGER default=50 at most this many causes
SELECT cause, reason, events, in_model, in_packages, in_torch, in_stdlib, runs, workloads, models, model_list,
       compiler_versions, top_user_frame
FROM event_causes(MAP {'compilers': $compilers, 'models': $models, 'devices': $devices, 'labels': $labels}, $kind,
                  $origin)
ORDER BY events DESC, cause
LIMIT $limit;
