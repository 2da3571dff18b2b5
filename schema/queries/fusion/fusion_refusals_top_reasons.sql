-- Fusion refusals: top reasons the scheduler gave for not fusing two nodes
-- From TORCH_LOGS="fusion" output (fusion_decisions, decision = 'refused').
-- @param model VARCHAR only this model
-- @param compiler VARCHAR only this compiler version
-- @param limit INTEGER default=20 at most this many reasons
WITH per_run AS (
    -- counted per run first: the runs join and the distinct counts then see a row per
    -- (reason, run), not one per refusal
    SELECT reason, run_id, count(*) AS refusals
    FROM fusion_decisions
    WHERE decision = 'refused'
    GROUP BY ALL
)
SELECT
    coalesce(d.reason, '(no reason given)')    AS reason,
    sum(d.refusals)::BIGINT                    AS refusals,
    count(DISTINCT d.run_id)                   AS runs,
    count(DISTINCT r.model)                    AS models,
    min(r.model)                               AS first_model
FROM per_run d
JOIN runs r USING (run_id)
WHERE ($model IS NULL OR r.model = $model)
  AND ($compiler IS NULL OR r.compiler_version = $compiler)
GROUP BY ALL
ORDER BY refusals DESC, reason
LIMIT $limit;
