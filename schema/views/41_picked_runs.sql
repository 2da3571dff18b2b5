-- The runs a canned query's run filters pick: the one filter convention of every query (the CLI's
-- -p model=..., the dashboards' shared filters). `f` maps filter names to values, each a
-- comma-separated list, a filter missing or NULL meaning none: picked_runs(MAP {'models': $model,
-- 'compilers': $compiler}). compilers name releases or families as version_matches does
-- (views/30_version_key.sql); models, devices and backends are exact; runs are run id prefixes;
-- labels are k=v pairs (several values of one key mean any of them, several keys all; values match
-- as workload_value, views/12_workloads.sql, spells them). A MAP, not named parameters with
-- defaults, which a DuckLake catalog does not keep.
CREATE OR REPLACE MACRO picked_runs(f) AS TABLE
    SELECT r.*
    FROM runs r
    WHERE (f['compilers'] IS NULL OR list_bool_or(list_transform(string_split(f['compilers'], ','),
                                                                 c -> version_matches(r.compiler_version, c))))
      AND (f['models'] IS NULL OR list_contains(string_split(f['models'], ','), r.model))
      AND (f['devices'] IS NULL OR list_contains(string_split(f['devices'], ','), r.device))
      AND (f['backends'] IS NULL OR list_contains(string_split(f['backends'], ','), r.backend))
      AND (f['runs'] IS NULL OR regexp_matches(r.run_id, '^(?:' || array_to_string(list_transform(
            string_split(f['runs'], ','), p -> regexp_escape(trim(p))), '|') || ')'))
      AND (f['labels'] IS NULL OR NOT EXISTS (
            SELECT 1
            FROM (SELECT split_part(l, '=', 1) AS k, list(substr(l, strpos(l, '=') + 1)) AS vs
                  FROM unnest(string_split(f['labels'], ',')) AS t(l) GROUP BY 1) AS want
            WHERE NOT coalesce(list_contains(list_transform(want.vs, v -> workload_value(want.k, v)),
                                             workload_value(want.k, r.labels ->> want.k)), false)));
-- The picked runs whose counts are samples: a run whose process did not finish (run_unfinished) made
-- only part of what the compiler makes, so every query that pools or takes the median of a point's runs
-- reads these, leaving out the runs `iwh compare` and `iwh changes` leave out (a harness holder's rows
-- are its harness's own, never cut short).
CREATE OR REPLACE MACRO sampled_runs(f) AS TABLE
    SELECT p.* FROM picked_runs(f) p
    WHERE run_unfinished(p.labels) IS NULL OR p.run_id IN (SELECT run_id FROM harness_holders);
