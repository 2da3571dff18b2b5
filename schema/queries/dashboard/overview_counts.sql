-- Overview: how many runs, workloads, models, compiler versions, devices, graphs, kernels and ingest errors
-- @internal used by the dashboards' pages
-- Counts over the runs the filters pick; kernels are generated kernels, extern calls apart. Of the
-- runs, how many have profiled kernel times, a profile without kernel events (a CPU run's: the
-- profiler records CPU ops, not Inductor's C++ kernels), or no profile; and how many failed a compile.
-- runs, workloads and models count compiles: the runs that hold a benchmark harness's results and
-- compiled nothing (harness_holders) are counted apart, as harness_result_runs. graphs, kernels and
-- extern calls are summed over the runs that tell them (run_metrics: NULL where the run holds no file
-- they are read from, as a profile alone), NULL where none does; *_unknown_runs count the others.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
WITH chosen AS (
    SELECT * FROM picked_runs(MAP {'compilers': $compilers, 'models': $models, 'devices': $devices, 'labels': $labels})
), picked AS (
    SELECT * FROM chosen WHERE run_id NOT IN (SELECT run_id FROM harness_holders)
), rolled AS (
    SELECT u.* FROM run_rollups u WHERE run_id IN (SELECT run_id FROM picked)
)
SELECT
    (SELECT count(*) FROM picked)                                   AS runs,
    (SELECT count(DISTINCT workload) FROM run_workloads WHERE run_id IN (SELECT run_id FROM picked)) AS workloads,
    (SELECT count(DISTINCT model) FROM picked)                      AS models,
    (SELECT count(DISTINCT compiler_version) FROM picked)           AS compiler_versions,
    (SELECT count(DISTINCT device) FROM picked)                     AS devices,
    (SELECT sum(graphs)::BIGINT FROM rolled)                        AS graphs,
    (SELECT sum(generated_kernel_rows)::BIGINT FROM rolled WHERE kernel_count IS NOT NULL) AS kernels,
    (SELECT sum(extern_calls)::BIGINT FROM rolled WHERE extern_kernel_count IS NOT NULL) AS extern_calls,
    (SELECT count(*) FROM picked) - (SELECT count(graphs) FROM rolled) AS graphs_unknown_runs,
    (SELECT count(*) FROM picked) - (SELECT count(kernel_count) FROM rolled) AS kernels_unknown_runs,
    (SELECT count(*) FROM ingest_errors WHERE run_id IN (SELECT run_id FROM chosen)) AS ingest_errors,
    (SELECT count(DISTINCT run_id) FROM ingest_errors WHERE run_id IN (SELECT run_id FROM chosen)) AS runs_with_errors,
    (SELECT count(*) FROM rolled WHERE kernel_timings > 0)          AS runs_with_kernel_times,
    (SELECT count(*) FROM rolled WHERE profiler_files > 0 AND kernel_timings = 0) AS runs_profile_without_kernels,
    (SELECT count(*) FROM picked WHERE run_id NOT IN (SELECT run_id FROM rolled WHERE profiler_files > 0 OR kernel_timings > 0)) AS runs_without_profile,
    (SELECT count(*) FROM rolled WHERE failures > 0)                AS runs_with_failures,
    (SELECT count(*) FROM chosen) - (SELECT count(*) FROM picked)   AS harness_result_runs;
