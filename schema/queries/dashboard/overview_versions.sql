-- Compiler versions and devices: runs, workloads and models of each, newest first
-- @internal used by the dashboards' pages
-- One row per compiler version x device x backend; `first_run` / `last_run` are the runs' start times.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
WITH picked AS (
    SELECT p.*, w.workload FROM picked_runs(MAP {'compilers': $compilers, 'models': $models, 'devices': $devices,
                                            'labels': $labels}) p JOIN run_workloads w USING (run_id)
)
SELECT
    compiler_version,
    device,
    backend,
    count(*)                 AS runs,
    count(DISTINCT workload) AS workloads,
    count(DISTINCT model)    AS models,
    min(started_at)          AS first_run,
    max(started_at)          AS last_run
FROM picked
GROUP BY compiler_version, device, backend
ORDER BY version_key(compiler_version) DESC NULLS LAST, compiler_version DESC, device, backend;
