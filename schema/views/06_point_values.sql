-- The one value the runs of a point make of a metric (a workload at a compiler version or a day, a
-- side of `iwh compare`, a value of `iwh changes --series`), by the metric's one rule, wherever it is
-- shown: the canned queries and the pages here, analysis/regress.py's side_value in Python for
-- `iwh compare` and `iwh changes`. Aggregates: in a GROUP BY, or as a window (OVER); a macro takes
-- no FILTER, so a condition goes inside (CASE WHEN ... THEN x END).
--   time_of_runs(seconds)  a measured time (compile time): the least, min of N (noise only adds time)
--   count_of_runs(n)       a count (kernels, graph breaks, failures): the lower median, an observed value
--   a rate                 of the runs' summed counts (05_rates.sql: fusion_rate(sum(pre), sum(post)),
--                          hit_rate(sum(hits), sum(lookups))), never a median of the runs' rates
CREATE OR REPLACE MACRO time_of_runs(seconds) AS min(seconds);
CREATE OR REPLACE MACRO count_of_runs(n) AS quantile_disc(n, 0.5);
