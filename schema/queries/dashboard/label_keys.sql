-- Dashboard: the label keys of the runs, with how many runs and distinct values each has
-- @internal used by the dashboards' pages
-- (What changed when offers them as the order of a series, e.g. nightly.) Run facts (run_fact_keys:
-- the command, its exit code, the host, versions) are not labels.
SELECT k AS label, sum(runs)::BIGINT AS runs, count(*) AS distinct_values
FROM label_value_runs
WHERE NOT list_contains(run_fact_keys(), k)
GROUP BY k
ORDER BY runs DESC, label;
