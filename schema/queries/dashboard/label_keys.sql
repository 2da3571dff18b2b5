-- Dashboard: the label keys of the runs, with how many runs and distinct values each has
-- (What changed when offers them as the order of a series, e.g. nightly.)
SELECT k AS label, count(DISTINCT run_id) AS runs, count(DISTINCT v) AS distinct_values
FROM run_label_values
GROUP BY k
ORDER BY runs DESC, label;
