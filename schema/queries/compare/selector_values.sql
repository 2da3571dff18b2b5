-- Compare: every value a selector can name, with its number of runs
-- @internal used by `iwh compare` and the Compare page
-- What `iwh compare` lists when a selector picks no runs: compiler versions, models, devices,
-- backends and scalar label values (key = the label's name; a label named like a column is
-- left out: a selector's device= names the column).
SELECT 'compiler' AS key, compiler_version AS value, count(*) AS runs FROM runs WHERE compiler_version IS NOT NULL GROUP BY ALL
UNION ALL
SELECT 'model', model, count(*) FROM runs WHERE model IS NOT NULL GROUP BY ALL
UNION ALL
SELECT 'device', device, count(*) FROM runs WHERE device IS NOT NULL GROUP BY ALL
UNION ALL
SELECT 'backend', backend, count(*) FROM runs WHERE backend IS NOT NULL GROUP BY ALL
UNION ALL
SELECT k, v, runs FROM label_value_runs
WHERE v IS NOT NULL AND k NOT IN ('compiler', 'compiler_version', 'model', 'device', 'backend', 'run', 'run_id')
ORDER BY key, value;
