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
    -- spelled once a label row and model, not once a run: the rows are counted first
    SELECT split_part(name, '=', 1) || '=' || workload_value(split_part(name, '=', 1),
                                                             substr(name, strpos(name, '=') + 1)),
           sum(runs)::BIGINT, count(DISTINCT model), 1, NULL
    FROM (SELECT l.name, r.model, count(*) AS runs
          FROM run_tallies l JOIN runs r USING (run_key, run_id)
          WHERE l.kind = 'label' GROUP BY ALL)
    WHERE split_part(name, '=', 1) IN (SELECT k FROM choice_label_keys) GROUP BY ALL
)
ORDER BY grp, vk NULLS LAST, selector;
