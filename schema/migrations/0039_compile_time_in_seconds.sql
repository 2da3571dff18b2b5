-- Compile time of the releases that write compilation_metrics' timers in seconds alone (2.3 to 2.5:
-- entire_frame_compile_time_s, backend_compile_time_s, inductor_compile_time_s, code_gen_time_s, the
-- timers 2.6 and later also write as *_cumulative_compile_time_us): run_rollups_of reads them where
-- the microsecond ones are missing. The rollups are made again by the migration's caller.
DELETE FROM run_rollups;
