-- Dashboard: the label keys of the runs, with how many runs and distinct values each has
-- @internal used by the dashboards' pages
-- (What changed when offers them as the order of a series, e.g. nightly.)
SELECT k AS label, sum(runs)::BIGINT AS runs, count(*) AS distinct_values
FROM label_value_runs
GROUP BY k
ORDER BY runs DESC, label;
