-- Compare: the failed compiles of some runs, each once, with the cause they group by
-- @internal used by `iwh compare` and the Compare page
-- One row per failure (a frame Dynamo could not compile): the cause (views/31_compile_event_reasons.sql:
-- Dynamo's registry id, else the normalised reason), whether the frame then ran eagerly, and where.
-- @param runs VARCHAR comma-separated run ids
SELECT run_id, compile_id, cause, normalised AS reason, fallback, origin, user_file, user_line
FROM compile_event_reasons
WHERE kind = 'failure' AND list_contains(string_split($runs, ','), run_id)
ORDER BY run_id, compile_id, cause, reason, user_file, user_line, origin, fallback;
