-- Choices for the two sides of a comparison: compiler versions and label values, with run counts
-- @internal used by the dashboards' pages
-- `selector` is what `iwh compare --base/--head` takes (compiler=VERSION or KEY=VALUE).
SELECT selector, runs, models FROM (
    SELECT 'compiler=' || compiler_version AS selector, count(*) AS runs, count(DISTINCT model) AS models,
           0 AS grp, version_key(compiler_version) AS vk
    FROM runs WHERE compiler_version IS NOT NULL GROUP BY ALL
    UNION ALL
    -- run_tallies' label rows are key=value, one a run and key: rows are runs; values as
    -- workload_value spells them (mode=inference is mode=infer)
    SELECT split_part(l.name, '=', 1) || '=' || workload_value(split_part(l.name, '=', 1),
                                                               substr(l.name, strpos(l.name, '=') + 1)),
           count(*), count(DISTINCT r.model), 1, NULL
    FROM run_tallies l JOIN runs r USING (run_id)
    WHERE l.kind = 'label' AND split_part(l.name, '=', 1) IN (SELECT k FROM choice_label_keys) GROUP BY ALL
)
ORDER BY grp, vk NULLS LAST, selector;
