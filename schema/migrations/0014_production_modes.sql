-- The compile modes production uses: cudagraphs, multi-rank jobs, what a trace holds, torch-spyre's
-- provenance sidecar. Every table carries run_id and run_key as every fact table does.

-- The job a rank's run belongs to: the folder holding the job's ranks (its manifest folder, or the
-- folder of its rank logs), which tells apart two jobs that share a name (the `job` label).
ALTER TABLE runs ADD COLUMN job VARCHAR;

-- cudagraph partitions of a graph's output code (`def partition_<N>(args)`, cudagraph-partitioned
-- wrappers): 0 for code without them, NULL where no code was read.
ALTER TABLE graphs ADD COLUMN partitions BIGINT;

-- What cudagraphs did with a compile: 'skip' (cudagraphs not used, with the reason Inductor gives,
-- "skipping cudagraphs due to ..."), 'record' (graphs recorded: n of them) and 'rerecord' (a graph
-- recorded again for a new input size or changed static inputs). source: compilation_metrics
-- (cudagraph_skip_reason), chromium_event (CUDAGraphNode.record spans) or torch_logs.
CREATE TABLE cudagraph_events (
    run_id      VARCHAR NOT NULL,
    compile_id  VARCHAR,
    kind        VARCHAR,
    reason      VARCHAR,
    n           BIGINT,
    source      VARCHAR,
    run_key     BIGINT
);

-- Collective operations in the order a compiled graph issues them: from the output code's extern
-- calls (source 'output_code', graph_id set) and Inductor's `inductor_collective_schedule`
-- artifact (source 'collective_schedule', compile_id set).
CREATE TABLE collectives (
    run_id      VARCHAR NOT NULL,
    graph_id    VARCHAR,
    compile_id  VARCHAR,
    seq         BIGINT,
    op          VARCHAR,
    source      VARCHAR,
    line        BIGINT,
    run_key     BIGINT
);

-- Inductor's per-op runtime estimates and output tensor metadata (`inductor_runtime_and_tensor_meta`,
-- 2.9+, with `log_tlparse`): one row per scheduled op of a compile.
CREATE TABLE op_estimates (
    run_id               VARCHAR NOT NULL,
    compile_id           VARCHAR,
    seq                  BIGINT,
    name                 VARCHAR,
    op_type              VARCHAR,
    estimated_runtime_ns DOUBLE,
    outputs              JSON,
    line                 BIGINT,
    run_key              BIGINT
);

-- The order compiled graphs ran in (`graph_execution`, 2.9+): one row per execution.
CREATE TABLE graph_executions (
    run_id      VARCHAR NOT NULL,
    seq         BIGINT,
    compile_id  VARCHAR,
    run_key     BIGINT
);

-- Records of the run's TORCH_TRACE logs by kind and artifact name (graph_dump and dump_file names
-- too), with what the warehouse does with them (ingest/catalog.py): 'parsed', 'kept', 'ignored'
-- or 'unknown' (no release the catalog covers writes it: a new release's new artifact).
CREATE TABLE trace_records (
    run_id      VARCHAR NOT NULL,
    record_kind VARCHAR,
    name        VARCHAR,
    n           BIGINT,
    handling    VARCHAR,
    run_key     BIGINT
);

-- torch-spyre's provenance sidecar (spyre_provenance.json, schema version 1).
-- Debug handles: a node's source line, ATen op, IR chain, the handles it was fused from and its
-- transform history (rewrites, fusions, decompositions, clones, remaps) as JSON.
CREATE TABLE spyre_handles (
    run_id            VARCHAR NOT NULL,
    handle_id         VARCHAR,
    source_file       VARCHAR,
    source_line       BIGINT,
    source_col        BIGINT,
    aten_op           VARCHAR,
    ir_chain          VARCHAR[],
    fused_from        VARCHAR[],
    transform_history JSON,
    run_key           BIGINT
);
-- Kernel identities: a finalized kernel bundle's content key (stable across compiles and cache
-- replays), its handles, ATen ops and the profiler event name it runs under (+ `#<step>`).
CREATE TABLE spyre_kernel_identities (
    run_id            VARCHAR NOT NULL,
    identity_key      VARCHAR,
    event_name_base   VARCHAR,
    aten_ops          VARCHAR[],
    handle_ids        VARCHAR[],
    spec_bindings     JSON,
    run_key           BIGINT
);
-- One kernel of one compile: its identity, compiler kernel name and upstream registration aliases
-- (`<kernel>:<ordinal>`, empty on cache replay or provenance level 0).
CREATE TABLE spyre_kernel_occurrences (
    run_id               VARCHAR NOT NULL,
    occurrence_key       VARCHAR,
    identity_key         VARCHAR,
    compile_key          VARCHAR,
    compiler_kernel_name VARCHAR,
    aliases              VARCHAR[],
    run_key              BIGINT
);
-- One compile's upstream projection: producers, provenance settings and whether Inductor's own
-- provenance joined (`upstream_join` 'ok'; else the gap: 'unavailable-provenance-level-0',
-- 'unavailable-cache-replay', ...).
CREATE TABLE spyre_compiles (
    run_id                VARCHAR NOT NULL,
    compile_key           VARCHAR,
    upstream_join         VARCHAR,
    projection_failed     BOOLEAN,
    provenance_level      BIGINT,
    structured_tracing    BOOLEAN,
    torch_spyre_version   VARCHAR,
    torch_version         VARCHAR,
    kernels               BIGINT,
    uncollected_kernels   VARCHAR[],
    run_key               BIGINT
);
