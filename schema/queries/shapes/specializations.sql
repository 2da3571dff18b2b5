-- Specializations: which symbol was pinned to which value, from which user line, and the recompile
-- Each symbolic_shape_specialization of the trace (an input dimension Dynamo had made dynamic, then
-- fixed to a constant) of an attempt Dynamo kept (views/44_kept_shape_events.sql), with the user line that caused it, and the reason Dynamo gave for recompiling
-- that frame when it did (a specialization is a classic recompile cause).
-- @param model VARCHAR only this model
-- @param compiler VARCHAR compiler version or family, e.g. 2.13
-- @param run VARCHAR run id or a prefix of it
WITH recompiles AS (
    SELECT run_id, regexp_replace(compile_id, '_[0-9]+$', '') AS frame_compile, string_agg(DISTINCT reason, '; ' ORDER BY reason) AS reason
    FROM compile_events
    WHERE kind = 'recompile'
    GROUP BY ALL
)
SELECT
    r.model, r.compiler_version, r.run_id, s.compile_id, s.symbol, s.source, s.value, s.reason,
    s.user_file, s.user_line, s.user_code, rc.reason AS recompile_reason
FROM kept_shape_events s
JOIN runs r USING (run_key, run_id)
LEFT JOIN recompiles rc ON rc.run_id = s.run_id AND rc.frame_compile = regexp_replace(s.compile_id, '_[0-9]+$', '')
WHERE s.kind = 'specialization'
  AND r.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model, 'compilers': $compiler, 'runs': $run}))
ORDER BY r.model, version_key(r.compiler_version), r.compiler_version, r.run_id, s.compile_id, s.line, s.symbol, s.source,
         s.value;
