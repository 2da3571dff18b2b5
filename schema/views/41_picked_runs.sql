-- The runs the shared dashboard filters pick. Each filter is a comma-separated list or NULL (no
-- filter); labels are k=v pairs: several values of one key mean any of them, several keys all;
-- values match as workload_value (views/12_workloads.sql) spells them.
CREATE OR REPLACE MACRO picked_runs(compilers, models, devices, labels) AS TABLE
    SELECT r.*
    FROM runs r
    WHERE (compilers IS NULL OR list_contains(string_split(compilers, ','), r.compiler_version))
      AND (models IS NULL OR list_contains(string_split(models, ','), r.model))
      AND (devices IS NULL OR list_contains(string_split(devices, ','), r.device))
      AND (labels IS NULL OR NOT EXISTS (
            SELECT 1
            FROM (SELECT split_part(l, '=', 1) AS k, list(substr(l, strpos(l, '=') + 1)) AS vs
                  FROM unnest(string_split(labels, ',')) AS t(l) GROUP BY 1) AS want
            WHERE NOT coalesce(list_contains(list_transform(want.vs, v -> workload_value(want.k, v)),
                                             workload_value(want.k, r.labels ->> want.k)), false)));
