-- Compilations of a run: one row per compilation_metrics record, with its times and failure
-- @internal used by the Run explorer page
-- @param run_id VARCHAR the run
SELECT
    c.compile_id,
    c.record_kind,
    c.co_name,
    regexp_extract(c.co_filename, '[^/]+$') AS co_file,
    c.co_firstlineno,
    c.graph_op_count,
    c.guard_count,
    round(c.duration_us / 1e6, 3)          AS duration_s,
    c.entire_frame_compile_time_s,
    c.backend_compile_time_s,
    c.inductor_compile_time_s,
    c.code_gen_time_s,
    c.fail_type,
    c.fail_reason
FROM compilations c
WHERE c.run_id = $run_id AND c.run_key = (SELECT run_key FROM runs WHERE run_id = $run_id)
ORDER BY c.start_time_us NULLS LAST, c.compile_id, c.record_kind, c.duration_us, c.co_name, c.fail_reason;
