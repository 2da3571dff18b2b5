-- Compiler versions and devices: runs and models of each, newest first
-- One row per compiler version x device x backend; `first_run` / `last_run` are the runs' start times.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
WITH picked AS (
    SELECT r.*
    FROM runs r
    WHERE ($compilers IS NULL OR list_contains(string_split($compilers, ','), r.compiler_version))
      AND ($models IS NULL OR list_contains(string_split($models, ','), r.model))
      AND ($devices IS NULL OR list_contains(string_split($devices, ','), r.device))
      AND ($labels IS NULL OR NOT EXISTS (
            SELECT 1
            FROM (SELECT split_part(l, '=', 1) AS k, list(substr(l, strpos(l, '=') + 1)) AS vs
                  FROM unnest(string_split($labels, ',')) AS t(l) GROUP BY 1) AS want
            WHERE NOT coalesce(list_contains(want.vs, r.labels ->> want.k), false)))
)
SELECT
    compiler_version,
    device,
    backend,
    count(*)                 AS runs,
    count(DISTINCT model)    AS models,
    min(started_at)          AS first_run,
    max(started_at)          AS last_run
FROM picked
GROUP BY compiler_version, device, backend
ORDER BY version_key(compiler_version) DESC NULLS LAST, compiler_version DESC, device, backend;
