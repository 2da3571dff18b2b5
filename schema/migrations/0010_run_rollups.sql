-- One row a run of the figures most queries and pages sum (run_rollups_of in schema/views says
-- how each is defined): written by the loader with the run, in the same transaction; filled for
-- the runs a warehouse already holds when it is migrated. run_metrics and run_compile_time read it.
CREATE TABLE run_rollups (
    run_id                 VARCHAR NOT NULL,
    graphs                 BIGINT,
    kernel_count           BIGINT,
    extern_kernel_count    BIGINT,
    pre_fusion_nodes       BIGINT,
    post_fusion_nodes      BIGINT,
    generated_kernel_rows  BIGINT,
    extern_calls           BIGINT,
    pointwise_kernels      BIGINT,
    reduction_kernels      BIGINT,
    persistent_reduction_kernels BIGINT,
    template_kernels       BIGINT,
    foreach_kernels        BIGINT,
    graph_breaks           BIGINT,
    recompiles             BIGINT,
    library_graph_breaks   BIGINT,
    library_recompiles     BIGINT,
    compile_records        BIGINT,
    frames                 BIGINT,
    total_s                DOUBLE,
    dynamo_s               DOUBLE,
    aot_s                  DOUBLE,
    inductor_s             DOUBLE,
    code_gen_s             DOUBLE,
    autotune_s             DOUBLE,
    cxx_triton_compile_s   DOUBLE,
    kernel_timings         BIGINT,
    profiled_kernels       BIGINT,
    kernel_us              DOUBLE,
    generated_us           DOUBLE,
    extern_us              DOUBLE,
    eager_us               DOUBLE,
    generated_launches     BIGINT,
    extern_launches        BIGINT,
    compiled_kernel_us     DOUBLE,
    max_kernel_us          DOUBLE,
    inductor_config_hash   VARCHAR,
    fx_lookups             BIGINT,
    fx_hits                BIGINT,
    fx_misses              BIGINT,
    fx_bypasses            BIGINT,
    aot_lookups            BIGINT,
    aot_hits               BIGINT,
    aot_misses             BIGINT,
    aot_bypasses           BIGINT,
    autotune_hits          BIGINT,
    autotune_misses        BIGINT,
    time_saved_s           DOUBLE
);
-- a run's inductor_config (about 22 KB of JSON, the same for every run of a release) by md5
CREATE TABLE inductor_configs (
    config_hash  VARCHAR PRIMARY KEY,
    text         VARCHAR NOT NULL
);
-- Per run, how often each name occurs where queries rank names over every run (run_tallies_in
-- says how each is counted): kind 'fusion_refusal' (name: the reason; NULL when none was given),
-- 'extern_op' (name: the extern kernel's signature, else its name) and 'label' (name: key=value of
-- each scalar label, n = 1: run_label_values reads them instead of parsing every run's JSON).
CREATE TABLE run_tallies (
    run_id  VARCHAR NOT NULL,
    kind    VARCHAR NOT NULL,
    name    VARCHAR,
    n       BIGINT
);
