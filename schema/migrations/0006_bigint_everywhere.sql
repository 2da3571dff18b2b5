-- Every integer column holds 64 bits: real artifacts hold values past 2^31 in any of them (a 2.3/2.4
-- trace writes a thread id such as 140144363024384 where later ones write the pid; byte counts,
-- parameter counts, object ids and nanosecond times pass 2^31 too). Symbolic sizes stay text.
ALTER TABLE compilations ALTER co_firstlineno TYPE BIGINT;
ALTER TABLE compilations ALTER graph_op_count TYPE BIGINT;
ALTER TABLE compilations ALTER graph_node_count TYPE BIGINT;
ALTER TABLE compilations ALTER graph_input_count TYPE BIGINT;
ALTER TABLE compilations ALTER guard_count TYPE BIGINT;
ALTER TABLE compilations ALTER shape_env_guard_count TYPE BIGINT;
ALTER TABLE compilations ALTER fail_user_frame_lineno TYPE BIGINT;
ALTER TABLE compile_events ALTER user_line TYPE BIGINT;
ALTER TABLE fusion_decisions ALTER line TYPE BIGINT;
ALTER TABLE fusions ALTER member_count TYPE BIGINT;
ALTER TABLE graphs ALTER aot_id TYPE BIGINT;
ALTER TABLE graphs ALTER pre_fusion_nodes TYPE BIGINT;
ALTER TABLE graphs ALTER post_fusion_nodes TYPE BIGINT;
ALTER TABLE graphs ALTER kernel_count TYPE BIGINT;
ALTER TABLE graphs ALTER extern_kernel_count TYPE BIGINT;
ALTER TABLE graphs ALTER compile_order TYPE BIGINT;
ALTER TABLE guards ALTER guard_count TYPE BIGINT;
ALTER TABLE ingest_errors ALTER line TYPE BIGINT;
ALTER TABLE kernels ALTER num_load TYPE BIGINT;
ALTER TABLE kernels ALTER num_store TYPE BIGINT;
ALTER TABLE kernels ALTER num_reduction TYPE BIGINT;
ALTER TABLE kernels ALTER site TYPE BIGINT;
ALTER TABLE kernels ALTER line TYPE BIGINT;
ALTER TABLE lineage ALTER user_line TYPE BIGINT;
ALTER TABLE ops ALTER idx TYPE BIGINT;
ALTER TABLE ops ALTER source_line TYPE BIGINT;
ALTER TABLE runs ALTER rank TYPE BIGINT;
ALTER TABLE runs ALTER pid TYPE BIGINT;
ALTER TABLE timings ALTER calls TYPE BIGINT;
