-- Latest fusion rate and kernel count per model (and device)
-- The newest run of each model x device (by start time, then compiler version), with the fusion rate
-- of views/20_run_metrics.sql; `runs` counts all the model's picked runs on that device.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
-- @param limit INTEGER default=200 at most this many models
-- @param offset INTEGER default=0 skip this many models (paging)
WITH picked AS (
    SELECT * FROM picked_runs($compilers, $models, $devices, $labels)
),
ranked AS (
    SELECT m.*, p.ingested_at,
           row_number() OVER (PARTITION BY m.model, m.device
                              ORDER BY m.started_at DESC NULLS LAST, version_key(m.compiler_version) DESC,
                                       p.ingested_at DESC, m.run_id) AS rn,
           count(*) OVER (PARTITION BY m.model, m.device) AS runs
    FROM run_metrics m
    JOIN picked p USING (run_id)
), latest AS (
SELECT
    model,
    device,
    compiler_version          AS latest_compiler,
    round(fusion_rate, 4)     AS fusion_rate,
    kernel_count              AS kernels,
    extern_kernel_count       AS extern_calls,
    graphs,
    runs,
    started_at                AS latest_run_at,
    run_id                    AS latest_run_id
FROM ranked
WHERE rn = 1
)
-- the total by a count, not count(*) OVER () (duckdb/duckdb#22846: see explore/runs)
SELECT l.*, (SELECT count(*) FROM latest) AS total
FROM latest l
ORDER BY model, device
LIMIT $limit OFFSET $offset;
