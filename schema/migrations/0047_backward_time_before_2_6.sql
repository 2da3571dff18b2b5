-- The lazily compiled backward's compile time of 2.5, whose bwd_compilation_metrics writes only
-- inductor_compile_time_s and code_gen_time_s (kept as the timings bwd_inductor_compile_time and
-- bwd_code_gen_time): run_rollups_of now adds them to the compile-time total and its parts, as it adds
-- 2.6's bwd_*_cumulative timers. The rollups are made again by the migration's caller.
DELETE FROM run_rollups;
