-- Compile time phase breakdown per model x compiler version (x device), median over runs
-- The exclusive phases of compile/compile_time_breakdown.sql (dynamo + aot + inductor + code gen =
-- total), taken per run and then the median over the group's runs, so one slow run does not dominate.
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
),
per_run AS (
    SELECT
        t.run_id,
        sum(t.duration_us) FILTER (WHERE t.name = 'dynamo_cumulative_compile_time')            AS dynamo,
        sum(t.duration_us) FILTER (WHERE t.name = 'aot_autograd_cumulative_compile_time')      AS aot,
        sum(t.duration_us) FILTER (WHERE t.name = 'inductor_cumulative_compile_time')          AS ind,
        sum(t.duration_us) FILTER (WHERE t.name = 'inductor_code_gen_cumulative_compile_time') AS cg,
        coalesce(sum(t.duration_us) FILTER (WHERE t.name = 'bwd_backward_cumulative_compile_time'), 0) AS bwd,
        coalesce(sum(t.duration_us) FILTER (WHERE t.name = 'bwd_inductor_cumulative_compile_time'), 0) AS bwd_ind,
        coalesce(sum(t.duration_us) FILTER (WHERE t.name = 'bwd_inductor_code_gen_cumulative_compile_time'), 0) AS bwd_cg,
        sum(t.duration_us) FILTER (WHERE t.name IN ('compile_time_autotune_time', 'bwd_compile_time_autotune_time')) AS autotune
    FROM timings t
    WHERE t.kind = 'compile' AND t.source = 'compilation_metrics' AND t.run_id IN (SELECT run_id FROM picked)
    GROUP BY t.run_id
)
SELECT
    p.model,
    p.compiler_version,
    p.device,
    count(*)                                                      AS runs,
    round(median(r.dynamo + r.bwd) / 1e6, 3)                      AS total_s,
    round(median(r.dynamo - r.aot) / 1e6, 3)                      AS dynamo_s,
    round(median(r.aot - r.ind + r.bwd - r.bwd_ind) / 1e6, 3)     AS aot_s,
    round(median(r.ind - r.cg + r.bwd_ind - r.bwd_cg) / 1e6, 3)   AS inductor_s,
    round(median(r.cg + r.bwd_cg) / 1e6, 3)                       AS code_gen_s,
    round(median(r.autotune) / 1e6, 3)                            AS autotune_s
FROM per_run r
JOIN picked p USING (run_id)
GROUP BY p.model, p.compiler_version, p.device
ORDER BY p.model, version_key(p.compiler_version), p.compiler_version, p.device;
