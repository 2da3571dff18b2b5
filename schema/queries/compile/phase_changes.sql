-- Where a compile phase of a workload got slower or faster: change points per phase along compiler versions
-- For each workload (views/12_workloads.sql, or over the labels pair_on names) and phase, its
-- points in order (compiler versions in release order, or a label's values as text with `series`,
-- such as a nightly's date), the median over a point's runs of one cache kind of the phase's
-- seconds in a run (run_phase_times, as compile/phase_series: a warm run's phases are a cache
-- load's), and each point whose phase time differs from the workload's point before by at least
-- `ratio` (relative) and `min_seconds` (absolute, so sub-millisecond phases do not flap); never
-- across workloads. before_cache / after_cache: the kind of the runs each point's time is of
-- (compile_kind: compiled, partial, warm); where they differ the direction is 'not comparable', as
-- `iwh compare` says of such compile times (a warm run's phases load what a cold one compiles). Timings are noisy: with one run a point, a change point says where to look, not
-- that it is a regression. before_run / after_run: the latest run of each point (release order),
-- for `iwh compare --base RUN --head RUN`. `iwh changes --metric compile_phase` shows these beside
-- the other change points, folding a phase under its parent (the span it most often sits in:
-- timings.parent) when both moved. A page of workloads a call, in order of model and workload: each
-- workload's series is read whole, and a warehouse of nightlies holds a thousand points of each;
-- `offset` gives the next page.
-- @param model VARCHAR only this model
-- @param phase VARCHAR only phases whose name contains this
-- @param ratio DOUBLE default=0.3 relative change that counts (0.3: 30% slower or faster)
-- @param min_seconds DOUBLE default=0.05 absolute change that counts, in seconds
-- @param series VARCHAR order the points by this label's value instead of the compiler version
-- @param pair_on VARCHAR labels that make a workload, comma-separated (default: the workload labels; device, rank: the run's)
-- @param workloads INTEGER default=5 at most this many workloads
-- @param offset INTEGER default=0 skip this many workloads (the next page)
WITH base AS (
    SELECT w.run_id, r.run_key, w.model, w.device, w.compiler_version, w.started_at,
           CASE WHEN $series IS NULL THEN w.compiler_version ELSE w.labels ->> $series END AS point,
           CASE WHEN $pair_on IS NULL AND $series IS NULL THEN w.workload
                ELSE workload_key(w.model, w.device, w.rank, w.labels,
                                  list_filter(list_transform(coalesce(string_split($pair_on, ','), workload_labels()),
                                                             k -> trim(k)),
                                              k -> k IS DISTINCT FROM $series)) END AS workload,
           compile_kind_order(c.cache_temperature) AS kind_order, compile_kind(c.cache_temperature) AS cache_kind
    FROM run_workloads w JOIN runs r USING (run_id) JOIN run_cache c USING (run_id)
    WHERE w.run_id IN (SELECT run_id FROM sampled_runs(MAP {'models': $model}))
), page AS (
    SELECT model, workload FROM base WHERE point IS NOT NULL GROUP BY ALL
    ORDER BY model, workload LIMIT $workloads OFFSET $offset
), picked AS (
    -- the page's runs, each with its place in release order (the latest of a point is its last)
    -- and the number of its workload: the grouping and the window below go by numbers
    SELECT b.*, row_number() OVER (ORDER BY release_order(b.compiler_version, b.started_at), b.run_id) AS latest,
           dense_rank() OVER (ORDER BY b.model, b.workload) AS series_id
    FROM base b SEMI JOIN page USING (model, workload)
    WHERE b.point IS NOT NULL
), points AS (
    -- the points in series order, numbered once each rather than ordered row by row
    SELECT point, row_number() OVER (ORDER BY CASE WHEN $series IS NULL THEN version_key(point) END, point)
               AS point_order
    FROM (SELECT DISTINCT point FROM picked)
), kept AS (
    -- a point's runs of one cache kind, as its compile time takes them (views/06_point_values.sql)
    SELECT r.*, o.point_order
    FROM picked r JOIN points o USING (point)
    QUALIFY r.kind_order = min(r.kind_order) OVER (PARTITION BY r.series_id, r.device, o.point_order)
), ordered AS (
    SELECT *, count(*) OVER (PARTITION BY series_id, device, point_order) AS point_runs
    FROM kept
), timed AS (
    SELECT r.series_id, r.device, r.point_order, r.point_runs, r.latest, r.run_key, r.cache_kind, p.phase, p.seconds
    FROM run_phases p
    JOIN ordered r USING (run_key)
    WHERE $phase IS NULL OR contains(p.phase, $phase)
), series AS (
    -- a point of one run (most of a nightly series) is that run's time: no median to group for
    SELECT series_id, device, point_order, phase, 1::BIGINT AS runs, seconds, run_key, cache_kind
    FROM timed WHERE point_runs = 1
    UNION ALL
    SELECT series_id, device, point_order, phase,
           count(*) AS runs, median(seconds) AS seconds, arg_max(run_key, latest) AS run_key,
           any_value(cache_kind) AS cache_kind
    FROM timed WHERE point_runs > 1
    GROUP BY series_id, device, point_order, phase
), stepped AS (
    SELECT *,
           lag(point_order) OVER w AS before_order,
           lag(seconds) OVER w AS before_seconds,
           lag(runs) OVER w AS before_runs,
           lag(run_key) OVER w AS before_key,
           lag(cache_kind) OVER w AS before_cache
    FROM series
    -- a phase that never takes min_seconds in the series cannot change by that much: |a - b| <= 2 max(|a|, |b|)
    WHERE (series_id, phase) IN (SELECT series_id, phase FROM series GROUP BY ALL
                                 HAVING 2 * max(abs(seconds)) >= $min_seconds)
    WINDOW w AS (PARTITION BY series_id, phase ORDER BY point_order)
), changed AS (
    SELECT * FROM stepped
    WHERE before_seconds IS NOT NULL
      AND abs(seconds - before_seconds) >= $min_seconds
      AND abs(seconds - before_seconds) >= $ratio * before_seconds
), parents AS (
    -- the span a changed phase most often sits in, counted over the changed points' rows alone: over
    -- every point's it would be most of the query's time
    SELECT r.series_id, r.device, r.point_order, p.phase, mode(p.parent ORDER BY p.parent) AS parent
    FROM run_phases p
    JOIN ordered r USING (run_key)
    SEMI JOIN changed c ON c.series_id = r.series_id AND c.device IS NOT DISTINCT FROM r.device
                       AND c.point_order = r.point_order AND c.phase = p.phase
    GROUP BY r.series_id, r.device, r.point_order, p.phase
)
SELECT s.model, s.workload, c.device, c.phase, pa.parent, b.point AS before_version, a.point AS after_version,
       round(c.before_seconds, 6) AS before_seconds, round(c.seconds, 6) AS after_seconds,
       round(c.seconds / nullif(c.before_seconds, 0), 3) AS ratio,
       CASE WHEN c.before_cache <> c.cache_kind THEN 'not comparable'
            WHEN c.seconds > c.before_seconds THEN 'slower' ELSE 'faster' END AS direction,
       c.before_cache, c.cache_kind AS after_cache, c.before_runs, c.runs AS after_runs, rb.run_id AS before_run, ra.run_id AS after_run
FROM changed c
JOIN (SELECT DISTINCT series_id, model, workload FROM picked) s USING (series_id)
JOIN points b ON b.point_order = c.before_order
JOIN points a ON a.point_order = c.point_order
JOIN picked rb ON rb.run_key = c.before_key
JOIN picked ra ON ra.run_key = c.run_key
LEFT JOIN parents pa ON pa.series_id = c.series_id AND pa.device IS NOT DISTINCT FROM c.device
                    AND pa.point_order = c.point_order AND pa.phase = c.phase
ORDER BY s.model, s.workload, abs(c.seconds - c.before_seconds) DESC, c.phase, c.device, c.point_order;
