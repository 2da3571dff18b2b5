-- Filter choices for the dashboards: compiler versions, models, devices and run labels
-- @internal used by the dashboards' pages
-- Labels offered are the view choice_label_keys' (variant, mode, dtype...).
-- One row per (facet, value), with the number of runs; `sort_key` orders versions as releases.
SELECT facet, value, runs FROM (
    SELECT 'compiler_version' AS facet, compiler_version AS value, count(*) AS runs,
           version_key(compiler_version) AS vk
    FROM runs WHERE compiler_version IS NOT NULL GROUP BY ALL
    UNION ALL
    SELECT 'model', model, count(*), NULL FROM runs WHERE model IS NOT NULL GROUP BY ALL
    UNION ALL
    SELECT 'device', device, count(*), NULL FROM runs WHERE device IS NOT NULL GROUP BY ALL
    UNION ALL
    SELECT 'label', k || '=' || v, runs, NULL
    FROM label_value_runs WHERE k IN (SELECT k FROM choice_label_keys) AND v IS NOT NULL
)
ORDER BY facet, vk NULLS LAST, value;
