-- Autotune winners: what max-autotune picked for each op and shape, and the runner-up
-- One row per autotuned op of each run (the AUTOTUNE tables of its stderr, else the trace's autotuning
-- spans): the winning choice and its config (block sizes, warps, stages), its time, how many
-- candidates were timed, and the second fastest shown.
-- @param model VARCHAR only this model
-- @param run VARCHAR run id or a prefix of it
-- @param compiler VARCHAR compiler version or family, e.g. 2.11
SELECT
    r.model, r.compiler_version, r.run_id, a.compile_id, a.seq, a.op, a.shapes, a.dtypes, a.num_choices,
    a.choice AS winner, a.config, a.time_ms,
    second.choice AS runner_up, second.config AS runner_up_config, second.time_ms AS runner_up_ms
FROM autotune_choices a
JOIN runs r USING (run_key, run_id)
LEFT JOIN autotune_choices second
       ON second.run_id = a.run_id AND second.seq = a.seq AND second.source = a.source AND second.rank = 2
WHERE a.winner
  AND r.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model, 'runs': $run, 'compilers': $compiler}))
ORDER BY r.model, version_key(r.compiler_version), r.compiler_version, r.run_id, a.seq;
