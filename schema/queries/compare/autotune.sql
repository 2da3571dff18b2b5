-- Compare: the autotune winners of one run, for the kernel-level diff
-- @internal used by `iwh compare` and the Compare page
-- Each autotuned op's winner (choice, config, time) in the order the run tuned them; choice_kind is the
-- choice without its per-graph counter (triton_mm_12 and triton_mm_3 are one template).
-- @param run VARCHAR run id
SELECT compile_id, seq, op, shapes, strides, dtypes, num_choices, choice,
       regexp_replace(choice, '_[0-9]+$', '') AS choice_kind, config, time_ms
FROM autotune_choices
WHERE run_id = $run AND run_key = (SELECT run_key FROM runs WHERE run_id = $run) AND winner
ORDER BY seq, compile_id, choice, config;
