-- The one value the runs of a point make of a metric (a workload at a compiler version or a day, a
-- side of `iwh compare`, a value of `iwh changes --series`), by the metric's one rule, wherever it is
-- shown: the canned queries and the pages here, analysis/regress.py's side_value in Python for
-- `iwh compare` and `iwh changes`. Aggregates: in a GROUP BY, or as a window (OVER); a macro takes
-- no FILTER, so a condition goes inside (CASE WHEN ... THEN x END).
--   time_of_runs(seconds)  a measured time: the least, min of N (noise only adds time)
--   compile_time_of_point(seconds, cache_temperature)
--                          compile time: the least of the point's runs of one cache kind, the most
--                          compiled it has (compile_kind; compile_cache_of_point names it;
--                          analysis/metrics.py's of_one_kind for `iwh compare`)
--   count_of_runs(n)       a count (kernels, graph breaks, failures): the lower median, an observed value
--   fusion rate            that of the point's node counts, each their lower median
--                          (fusion_rate(count_of_runs(pre), count_of_runs(post))): the rate of the
--                          counts shown beside it, never a median of the runs' rates
--   a hit rate             of the runs' summed counts (05_rates.sql: hit_rate(sum(hits), sum(lookups))):
--                          a cold run and a warm one hit half their lookups
CREATE OR REPLACE MACRO time_of_runs(seconds) AS min(seconds);
CREATE OR REPLACE MACRO count_of_runs(n) AS quantile_disc(n, 0.5);
-- What a run's compile time measures, by how it met the caches (run_cache.cache_temperature):
-- 'compiled' (caches off, or cold: every graph compiled; also a run of no known temperature),
-- 'partial' (some graphs loaded), 'warm' (every graph loaded: loading, not the compiler's work).
CREATE OR REPLACE MACRO compile_kind(temperature) AS
    CASE WHEN temperature IN ('partial', 'warm') THEN temperature ELSE 'compiled' END;
-- The kinds in the order a point prefers them (0 compiled, 1 partial, 2 warm): a query that keeps a
-- point's runs of one kind (the compile phases) keeps those whose order is the point's least.
CREATE OR REPLACE MACRO compile_kind_order(temperature) AS
    CASE compile_kind(temperature) WHEN 'compiled' THEN 0 WHEN 'partial' THEN 1 ELSE 2 END;
-- A point's compile time: time_of_runs over its runs of one kind, the compiled ones where it has any,
-- else the partly warm, else the warm, so that a warm run joining a point never lowers its compile
-- time to a cache load; compile_cache_of_point says which kind it is of (NULL: no run has a time).
-- In a GROUP BY (a window takes one function call, and DuckDB's windowed min of a struct is wrong).
CREATE OR REPLACE MACRO compile_time_of_point(seconds, temperature) AS coalesce(
    time_of_runs(CASE WHEN compile_kind(temperature) = 'compiled' THEN seconds END),
    time_of_runs(CASE WHEN compile_kind(temperature) = 'partial' THEN seconds END),
    time_of_runs(CASE WHEN compile_kind(temperature) = 'warm' THEN seconds END));
CREATE OR REPLACE MACRO compile_cache_of_point(seconds, temperature) AS CASE
    WHEN count(CASE WHEN compile_kind(temperature) = 'compiled' THEN seconds END) > 0 THEN 'compiled'
    WHEN count(CASE WHEN compile_kind(temperature) = 'partial' THEN seconds END) > 0 THEN 'partial'
    WHEN count(CASE WHEN compile_kind(temperature) = 'warm' THEN seconds END) > 0 THEN 'warm' END;
