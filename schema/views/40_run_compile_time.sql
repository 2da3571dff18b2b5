-- Compile time per run, in seconds, from compilation_metrics: the one definition every query
-- uses, kept in run_rollups (run_rollups_of says how the parts are made). Runs without
-- compilation_metrics records have no row.
CREATE OR REPLACE VIEW run_compile_time AS
SELECT run_id, frames, total_s, dynamo_s, aot_s, inductor_s, code_gen_s, autotune_s, cxx_triton_compile_s
FROM run_rollups
WHERE compile_records > 0;
