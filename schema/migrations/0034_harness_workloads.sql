-- Each benchmark harness row keeps its workload (views/61_harness.sql: harness_row_workload), made
-- by the loader as it writes the row, as a run's is kept in its rollup: computed by the view on every
-- read it was most of the time a harness query took (4.9 s of 10 over a year of nightlies, 788,400
-- rows). Rows written before are given theirs by the loader's migration (ingest/rollups.migrate).
ALTER TABLE harness_results ADD COLUMN workload VARCHAR;

-- HUD's records and suite numbers of every point of harness_point_keys() (compiler versions,
-- nightlies), kept by the loader as it writes (ingest/rollups.fill_harness_points): the macros
-- harness_models_of and harness_summary_of computed over every row at each read took 10 to 15 s over
-- a year of nightlies; read here they take milliseconds. A point's rows are made again whenever a
-- run that holds or is linked to its harness rows is written or replaced.
CREATE TABLE harness_records (
    point_key            VARCHAR,     -- compiler | nightly (harness_point_keys())
    suite                VARCHAR,
    point                VARCHAR,
    compiler_version     VARCHAR,
    mode                 VARCHAR,
    dtype                VARCHAR,
    backend              VARCHAR,
    device               VARCHAR,
    variant              VARCHAR,
    model                VARCHAR,
    workload             VARCHAR,
    batch_size           BIGINT,
    accuracy             VARCHAR,
    speedup              DOUBLE,
    abs_latency          DOUBLE,
    compilation_latency  DOUBLE,
    compression_ratio    DOUBLE,
    eager_peak_mem       DOUBLE,
    dynamo_peak_mem      DOUBLE,
    graph_breaks         BIGINT,
    unique_graph_breaks  BIGINT,
    calls_captured       BIGINT,
    unique_graphs        BIGINT,
    fallbacks_to_eager   BIGINT,
    passed               BOOLEAN,
    accuracy_passed      BOOLEAN,
    performance_samples  BIGINT,
    accuracy_samples     BIGINT,
    performance_run_id   VARCHAR,
    accuracy_run_id      VARCHAR,
    run_ids              VARCHAR[]
);

CREATE TABLE harness_point_summaries (
    point_key                      VARCHAR,
    suite                          VARCHAR,
    point                          VARCHAR,
    mode                           VARCHAR,
    dtype                          VARCHAR,
    backend                        VARCHAR,
    device                         VARCHAR,
    variant                        VARCHAR,
    compiler_version               VARCHAR,
    workloads                      BIGINT,
    passed_workloads               BIGINT,
    pass_rate                      DOUBLE,
    geomean_speedup                DOUBLE,
    compilation_latency            DOUBLE,
    compression_ratio              DOUBLE,
    dynamo_peak_mem                DOUBLE,
    geomean_speedup_all            DOUBLE,
    accuracy_checked               BOOLEAN,
    workloads_without_accuracy     BIGINT,
    workloads_without_performance  BIGINT
);

-- Which runs' rows make each kept point (harness_records.run_ids, one row a run): what the loader
-- looks up to find the points a written or replaced run touches.
CREATE TABLE harness_point_runs (
    point_key  VARCHAR,
    point      VARCHAR,
    run_id     VARCHAR
);
