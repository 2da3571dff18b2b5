-- Filter choices for the dashboards: compiler versions, models, devices and run labels
-- Labels offered are those with 2 to 12 short values across the warehouse (variant, mode, dtype...);
-- per-run values such as wall times or commit hashes would not make useful filters.
-- One row per (facet, value), with the number of runs; `sort_key` orders versions as releases.
WITH label_values AS (
    SELECT j.key AS k, j.value ->> '$' AS v, r.run_id
    FROM runs r, json_each(r.labels) AS j
    WHERE j.type IN ('VARCHAR', 'BIGINT', 'UBIGINT', 'BOOLEAN')
),
useful_keys AS (
    SELECT k FROM label_values
    GROUP BY k
    HAVING count(DISTINCT v) BETWEEN 2 AND 12 AND max(length(v)) <= 32
)
SELECT facet, value, runs FROM (
    SELECT 'compiler_version' AS facet, compiler_version AS value, count(*) AS runs,
           version_key(compiler_version) AS vk
    FROM runs WHERE compiler_version IS NOT NULL GROUP BY ALL
    UNION ALL
    SELECT 'model', model, count(*), NULL FROM runs WHERE model IS NOT NULL GROUP BY ALL
    UNION ALL
    SELECT 'device', device, count(*), NULL FROM runs WHERE device IS NOT NULL GROUP BY ALL
    UNION ALL
    SELECT 'label', k || '=' || v, count(DISTINCT run_id), NULL
    FROM label_values WHERE k IN (SELECT k FROM useful_keys) AND v IS NOT NULL GROUP BY ALL
)
ORDER BY facet, vk NULLS LAST, value;
