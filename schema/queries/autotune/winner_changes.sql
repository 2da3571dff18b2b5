-- Autotune winners that changed between two compiler versions
-- For each workload (views/12_workloads.sql) and each autotuned op (op, shapes, strides, dtypes), the
-- winner on the base and the head side (the latest run of each: release_order), and whether it changed:
-- another template or extern choice, or the same template with another config. Choices are compared
-- without their per-graph counter (triton_mm_12 = triton_mm_3).
-- @param base VARCHAR base compiler version or family, e.g. 2.11
-- @param head VARCHAR head compiler version or family, e.g. 2.13
-- @param model VARCHAR only this model
-- @param all BOOLEAN default=false also list the ops whose winner stayed the same
WITH winners AS (
    SELECT
        r.model, r.workload, r.compiler_version, r.started_at, r.run_id, a.op, a.shapes, a.strides, a.dtypes,
        a.choice, regexp_replace(a.choice, '_[0-9]+$', '') AS choice_kind, a.config, a.time_ms,
        row_number() OVER (PARTITION BY r.run_id, a.op, a.shapes, a.strides, a.dtypes ORDER BY a.seq) AS nth
    FROM autotune_choices a
    JOIN run_workloads r USING (run_id)
    WHERE a.winner AND r.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model}))
), side AS (
    SELECT *, CASE WHEN version_matches(compiler_version, $base) THEN 'base'
                   WHEN version_matches(compiler_version, $head) THEN 'head' END AS side
    FROM winners
), latest AS (
    SELECT * FROM side WHERE side IS NOT NULL
    QUALIFY row_number() OVER (PARTITION BY side, workload, op, shapes, strides, dtypes, nth
                               ORDER BY release_order(compiler_version, started_at) DESC, run_id DESC) = 1
), paired AS (
    SELECT
        coalesce(b.model, h.model) AS model, coalesce(b.workload, h.workload) AS workload, coalesce(b.op, h.op) AS op, coalesce(b.shapes, h.shapes) AS shapes,
        coalesce(b.dtypes, h.dtypes) AS dtypes,
        b.choice AS base_winner, b.config AS base_config, b.time_ms AS base_ms,
        h.choice AS head_winner, h.config AS head_config, h.time_ms AS head_ms,
        CASE WHEN h.op IS NULL THEN 'base only'
             WHEN b.op IS NULL THEN 'head only'
             WHEN b.choice_kind = h.choice_kind AND b.config IS NOT DISTINCT FROM h.config THEN 'same'
             ELSE 'changed' END AS status,
        b.run_id AS base_run, h.run_id AS head_run
    FROM (SELECT * FROM latest WHERE side = 'base') b
    FULL JOIN (SELECT * FROM latest WHERE side = 'head') h
      ON b.workload = h.workload AND b.op = h.op AND b.shapes = h.shapes
     AND b.strides IS NOT DISTINCT FROM h.strides AND b.dtypes IS NOT DISTINCT FROM h.dtypes AND b.nth = h.nth
)
SELECT * FROM paired
WHERE $all OR status <> 'same'
ORDER BY model, workload, status, op, shapes, dtypes, base_winner, base_config, base_ms, head_winner, head_config, head_ms,
         base_run, head_run;
