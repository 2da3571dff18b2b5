-- Core warehouse tables: the design's schema contract.
-- Every fact row carries run_id; graph-level rows carry graph_id too.
-- graph_id is '<aot_id>_<phase>' from the '# AOT ID:' line (unique within one process),
-- or the debug folder name when no AOT ID is known.

CREATE TABLE runs (
    run_id            VARCHAR PRIMARY KEY,  -- hash of the run's artifact contents: same artifacts, same id
    model             VARCHAR,
    compiler_version  VARCHAR,              -- e.g. 2.13.0+cpu
    compiler_commit   VARCHAR,
    device            VARCHAR,              -- cpu | cuda | spyre
    device_name       VARCHAR,
    backend           VARCHAR,              -- cpp | triton | spyre
    rank              INTEGER,
    labels            JSON,                 -- every extra manifest or --label key
    source_path       VARCHAR,              -- the run's folder
    started_at        TIMESTAMP,
    ingested_at       TIMESTAMP,
    pid               INTEGER,
    python_version    VARCHAR,
    triton_version    VARCHAR,
    cuda_version      VARCHAR,
    artifact_bytes    BIGINT,
    ingest_seconds    DOUBLE
);

CREATE TABLE graphs (
    run_id               VARCHAR NOT NULL,
    graph_id             VARCHAR NOT NULL,
    compile_id           VARCHAR,           -- as the trace writes it: 0/0, 1/0_1, !0/7/0
    phase                VARCHAR,           -- inference | forward | backward
    aot_id               INTEGER,
    folder               VARCHAR,           -- debug-tree folder name, e.g. model__0_forward_1.0
    pre_fusion_nodes     INTEGER,           -- top-level records of ir_pre_fusion.txt
    post_fusion_nodes    INTEGER,           -- top-level records of ir_post_fusion.txt
    kernel_count         INTEGER,           -- generated kernels defined in output_code.py
    extern_kernel_count  INTEGER,           -- extern / fallback call sites
    compile_order        INTEGER,           -- the folder's '.N' suffix: process-wide Inductor compile order
    source               VARCHAR,           -- debug_tree | torch_trace
    output_code_hash     VARCHAR
);

CREATE TABLE ops (
    run_id       VARCHAR NOT NULL,
    graph_id     VARCHAR NOT NULL,
    idx          INTEGER,                   -- position in the graph
    name         VARCHAR,
    op_kind      VARCHAR,                   -- placeholder | call_function | getitem | output
    target       VARCHAR,                   -- aten.addmm.default
    dtype        VARCHAR,
    shape        VARCHAR,
    source_file  VARCHAR,
    source_line  INTEGER,
    source_code  VARCHAR
);

CREATE TABLE kernels (
    run_id         VARCHAR NOT NULL,
    graph_id       VARCHAR NOT NULL,
    kernel_name    VARCHAR NOT NULL,
    generated      BOOLEAN NOT NULL,        -- false for extern call sites
    backend        VARCHAR,                 -- cpp | triton | spyre | extern
    category       VARCHAR,                 -- pointwise | reduction | persistent_reduction | template | foreach | extern | ...
    aten_ops       VARCHAR[],
    source_nodes   VARCHAR[],
    num_load       INTEGER,
    num_store      INTEGER,
    num_reduction  INTEGER,
    size_hints     JSON,
    signature      VARCHAR,                 -- name without its per-graph counter
    source_hash    VARCHAR,                 -- of the normalised source (names, counters, paths)
    site           INTEGER,                 -- definition / call-site order within the graph
    debug_handle   INTEGER,
    line           INTEGER,
    details        JSON                     -- parser extras (spyre cores, work division, reduction hint...)
);

-- Kernel source text, deduplicated by the hash of the normalised text.
CREATE TABLE kernel_sources (
    source_hash  VARCHAR PRIMARY KEY,
    source       VARCHAR NOT NULL
);

CREATE TABLE fusions (
    run_id        VARCHAR NOT NULL,
    graph_id      VARCHAR NOT NULL,
    group_name    VARCHAR,                  -- op1_op2_op3
    node_class    VARCHAR,                  -- FusedSchedulerNode, SchedulerNode, ...
    member_count  INTEGER,
    members       VARCHAR[],
    kernel_name   VARCHAR,
    inner_classes VARCHAR[],                -- the (...) of the header: member or IR classes
    buffers       VARCHAR[]                 -- buffers the node writes
);

CREATE TABLE layouts (
    run_id        VARCHAR NOT NULL,
    graph_id      VARCHAR NOT NULL,
    buffer        VARCHAR,
    layout_kind   VARCHAR,                  -- FixedLayout, NonOwningLayout, ... ; spyre: tensor role
    device        VARCHAR,
    dtype         VARCHAR,
    size          VARCHAR[],                -- symbolic sizes kept as text
    stride        VARCHAR[],
    "offset"      VARCHAR,
    ir_class      VARCHAR,                  -- ComputedBuffer, MultiOutput, ...
    kernel_name   VARCHAR,                  -- spyre: the kernel the tensor belongs to
    details       JSON                      -- spyre: device_size, stride_map, dataFormat_, work division, scratchpad
);

CREATE TABLE lineage (
    run_id          VARCHAR NOT NULL,
    graph_id        VARCHAR NOT NULL,
    source_node     VARCHAR,                -- pre-grad (Dynamo graph) node
    post_grad_node  VARCHAR,
    kernel_name     VARCHAR,
    debug_handle    INTEGER,
    user_file       VARCHAR,
    user_line       INTEGER,
    source          VARCHAR                 -- provenance | torch_trace
);

CREATE TABLE artifacts (
    run_id        VARCHAR NOT NULL,
    path          VARCHAR NOT NULL,         -- relative to the run's folder
    kind          VARCHAR,                  -- the parser (source kind) that read it, or 'skipped'
    bytes         BIGINT,
    content_hash  VARCHAR,
    mtime         DOUBLE
);

CREATE TABLE ingest_errors (
    run_id       VARCHAR,
    path         VARCHAR,
    kind         VARCHAR,                   -- source kind (parser module name)
    line         INTEGER,
    message      VARCHAR,
    severity     VARCHAR,                   -- error | warning
    ingested_at  TIMESTAMP
);

CREATE TABLE compilations (
    run_id                                   VARCHAR NOT NULL,
    compile_id                               VARCHAR,
    record_kind                              VARCHAR,  -- compilation_metrics | bwd_compilation_metrics
    co_name                                  VARCHAR,
    co_filename                              VARCHAR,
    co_firstlineno                           INTEGER,
    frame_key                                VARCHAR,
    is_forward                               BOOLEAN,
    graph_op_count                           INTEGER,
    graph_node_count                         INTEGER,
    graph_input_count                        INTEGER,
    guard_count                              INTEGER,
    shape_env_guard_count                    INTEGER,
    start_time_us                            BIGINT,
    duration_us                              BIGINT,
    entire_frame_compile_time_s              DOUBLE,
    backend_compile_time_s                   DOUBLE,
    inductor_compile_time_s                  DOUBLE,
    code_gen_time_s                          DOUBLE,
    dynamo_cumulative_compile_time_us        BIGINT,
    aot_autograd_cumulative_compile_time_us  BIGINT,
    inductor_cumulative_compile_time_us      BIGINT,
    inductor_code_gen_cumulative_compile_time_us BIGINT,
    triton_compile_time_us                   BIGINT,
    compile_time_autotune_time_us            BIGINT,
    fail_type                                VARCHAR,
    fail_reason                              VARCHAR,
    fail_user_frame_filename                 VARCHAR,
    fail_user_frame_lineno                   INTEGER,
    restart_reasons                          VARCHAR[],
    has_guarded_code                         BOOLEAN,
    pytorch_version                          VARCHAR,
    record                                   JSON      -- the whole record
);

CREATE TABLE timings (
    run_id       VARCHAR NOT NULL,
    compile_id   VARCHAR,
    graph_id     VARCHAR,
    kind         VARCHAR,                   -- compile | kernel
    name         VARCHAR,
    duration_us  DOUBLE,                    -- total over calls
    calls        INTEGER,
    source       VARCHAR                    -- compilation_metrics | chromium_event | profiler
);

CREATE TABLE compile_events (
    run_id      VARCHAR NOT NULL,
    compile_id  VARCHAR,
    kind        VARCHAR,                    -- graph_break | recompile | restart | failure
    reason      VARCHAR,
    user_file   VARCHAR,
    user_line   INTEGER,
    source      VARCHAR                     -- torch_trace | torch_logs
);

CREATE TABLE fusion_decisions (
    run_id      VARCHAR NOT NULL,
    compile_id  VARCHAR,
    node_a      VARCHAR,
    node_b      VARCHAR,
    decision    VARCHAR,                    -- refused | fused
    reason      VARCHAR,
    line        INTEGER
);

CREATE TABLE guards (
    run_id       VARCHAR NOT NULL,
    compile_id   VARCHAR,
    guard_count  INTEGER,
    text         VARCHAR
);
