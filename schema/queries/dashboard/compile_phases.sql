-- Compile time phase breakdown per model x compiler version (x device), median over runs
-- The exclusive phases of the view run_compile_time (dynamo + aot + inductor + code gen =
-- total), taken per run and then the median over the group's runs, so one slow run does not dominate.
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
WITH picked AS (
    SELECT * FROM picked_runs($compilers, $models, $devices, $labels)
)
SELECT
    p.model,
    p.compiler_version,
    p.device,
    count(*)                                                      AS runs,
    round(median(r.total_s), 3)       AS total_s,
    round(median(r.dynamo_s), 3)      AS dynamo_s,
    round(median(r.aot_s), 3)         AS aot_s,
    round(median(r.inductor_s), 3)    AS inductor_s,
    round(median(r.code_gen_s), 3)    AS code_gen_s,
    round(median(r.autotune_s), 3)    AS autotune_s
FROM run_compile_time r
JOIN picked p USING (run_id)
GROUP BY p.model, p.compiler_version, p.device
ORDER BY p.model, version_key(p.compiler_version), p.compiler_version, p.device;
