-- PyTorch's benchmark harness (benchmarks/dynamo/*.py): one row per row of its CSVs, every column
-- kept in `columns` as written, the ones HUD and CI read also typed. Held by the run the CSV lies
-- in, or by a run of the harness files alone; the `harness_links` view finds the runs of each
-- row's model under its job folder.
--   kind   performance | accuracy | compile_times (<output>_compilation_metrics.csv: seconds per
--          dynamo_timed function, in `columns`) | expected (ci_expected_accuracy: CI's gate values)
--   suite, mode, dtype, backend: from the JSON records beside the CSV, else its file name's words
CREATE TABLE harness_results (
    run_id               VARCHAR NOT NULL,
    run_key              BIGINT,
    file                 VARCHAR,     -- the CSV, relative to the run's folder
    line                 BIGINT,      -- the row's line in it
    job                  VARCHAR,     -- the folder the CSV lies in, spelled as runs.source_path is
    kind                 VARCHAR,
    suite                VARCHAR,     -- timm_models | huggingface | torchbench
    mode                 VARCHAR,     -- inference | training
    dtype                VARCHAR,
    backend              VARCHAR,
    device               VARCHAR,     -- the `dev` column
    model                VARCHAR,     -- the `name` column
    batch_size           BIGINT,
    tag                  VARCHAR,
    accuracy             VARCHAR,     -- pass | pass_due_to_skip | eager_variation | fail_accuracy | ...
    speedup              DOUBLE,
    abs_latency          DOUBLE,      -- ms
    compilation_latency  DOUBLE,      -- s
    compression_ratio    DOUBLE,      -- eager peak memory / compiled peak memory
    eager_peak_mem       DOUBLE,      -- GB
    dynamo_peak_mem      DOUBLE,
    cache_lookup_latency DOUBLE,
    baseline             DOUBLE,
    speedup_vs_baseline  DOUBLE,
    calls_captured       BIGINT,
    unique_graphs        BIGINT,
    graph_breaks         BIGINT,
    unique_graph_breaks  BIGINT,
    autograd_captures    BIGINT,
    autograd_compiles    BIGINT,
    cudagraph_skips      BIGINT,
    fallbacks_to_eager   BIGINT,
    columns              JSON         -- the whole row: {header: value as written}
);

-- Triton's facts of each generated kernel: one row per binary Triton compiled for it (a kernel
-- autotuned over N configs has up to N), from the Triton cache folder the capture keeps
-- (TRITON_CACHE_DIR: `<hash>/<kernel>.json`), the trace's `triton_kernel_info` (autotune state,
-- number of configs, compile time, the best or only config) and the debug log of Inductor's
-- autotuner (`Best config for <kernel>: ..., nreg N, nspill M, #shared-mem S`), which alone holds
-- registers and spills: NULL where the run did not log it.
--   source   triton_cache | torch_trace | torch_logs
--   chosen   true for the binary that ran (the best or only config), NULL where unknown
CREATE TABLE triton_kernels (
    run_id           VARCHAR NOT NULL,
    run_key          BIGINT,
    compile_id       VARCHAR,
    kernel_name      VARCHAR,     -- as output_code names it: kernels.kernel_name
    source           VARCHAR,
    cache_key        VARCHAR,     -- the Triton cache folder's hash
    num_warps        BIGINT,
    num_stages       BIGINT,
    num_ctas         BIGINT,
    maxnreg          BIGINT,
    shared_bytes     BIGINT,      -- shared memory the binary uses
    target           VARCHAR,     -- backend:arch, e.g. cuda:90
    triton_version   VARCHAR,
    config           VARCHAR,     -- block sizes and launch settings, as Inductor prints them
    chosen           BOOLEAN,
    autotune_state   VARCHAR,     -- miss | hit | only 1 config | force_disabled
    num_configs      BIGINT,
    compile_time_us  DOUBLE,
    n_regs           BIGINT,
    n_spills         BIGINT,
    metadata         JSON         -- the cache JSON or trace entry, whole
);

-- A workload's mode and dtype are now spelled one way (views/12_workloads.sql, workload_value: the
-- harness's inference/training and float32/float16/bfloat16 read as infer/train and fp32/fp16/bf16):
-- the rollups of runs labelled the harness's way keep their old workload key, so they are dropped and
-- made again by the migration's caller (fill_rollups). The words are restated here, once, for the
-- rows written before.
DELETE FROM run_rollups
WHERE run_id IN (SELECT run_id FROM runs
                 WHERE lower(labels ->> 'mode') IN ('inference', 'training')
                    OR lower(labels ->> 'dtype') IN ('float32', 'float16', 'bfloat16'));
