-- Where a compile phase of a workload got slower or faster: change points per phase along compiler versions
-- For each workload (views/12_workloads.sql, or over the labels pair_on names) and phase, its points
-- in order (compiler versions in release order, or a label's values as text with `series`, such as a
-- nightly's date), the median over a point's runs of the phase's seconds in a run (run_phase_times,
-- as compile/phase_series), and each point whose phase time differs from the workload's point
-- before by at least `ratio` (relative) and `min_seconds` (absolute, so sub-millisecond phases do
-- not flap); never across workloads. Timings are noisy: with one run a point, a change point says
-- where to look, not that it is a regression. before_run / after_run: the latest run of each point
-- (release order), for `iwh compare --base RUN --head RUN`. `iwh changes --metric compile_phase`
-- shows these beside the other change points. A page of workloads a call, in order of model and
-- workload: each workload's series is read whole, and a warehouse of nightlies holds a thousand
-- points of each; `offset` gives the next page.
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
                                              k -> k IS DISTINCT FROM $series)) END AS workload
    FROM run_workloads w JOIN runs r USING (run_id)
    WHERE ($model IS NULL OR w.model = $model)
), page AS (
    SELECT model, workload FROM base WHERE point IS NOT NULL GROUP BY ALL
    ORDER BY model, workload LIMIT $workloads OFFSET $offset
), picked AS (
    -- the page's runs, each with its place in release order (the latest of a point is its last)
    SELECT b.*, row_number() OVER (ORDER BY release_order(b.compiler_version, b.started_at), b.run_id) AS latest
    FROM base b SEMI JOIN page USING (model, workload)
    WHERE b.point IS NOT NULL
), points AS (
    -- the points in series order, numbered once each rather than ordered row by row
    SELECT point, row_number() OVER (ORDER BY CASE WHEN $series IS NULL THEN version_key(point) END, point)
               AS point_order
    FROM (SELECT DISTINCT point FROM picked)
), series AS (
    SELECT r.model, r.workload, r.device, r.point, any_value(o.point_order) AS point_order, p.phase,
           min(r.compiler_version) AS compiler_version,
           count(*) AS runs, median(p.seconds) AS seconds,
           arg_max(r.run_id, r.latest) AS run_id
    FROM run_phases p
    JOIN picked r USING (run_key)
    JOIN points o USING (point)
    WHERE $phase IS NULL OR contains(p.phase, $phase)
    GROUP BY r.model, r.workload, r.device, r.point, p.phase
), stepped AS (
    SELECT *,
           lag(point) OVER w AS before_point,
           lag(seconds) OVER w AS before_seconds,
           lag(runs) OVER w AS before_runs,
           lag(run_id) OVER w AS before_run
    FROM series
    WINDOW w AS (PARTITION BY workload, phase ORDER BY point_order)
)
SELECT model, workload, device, phase, before_point AS before_version, point AS after_version,
       round(before_seconds, 6) AS before_seconds, round(seconds, 6) AS after_seconds,
       round(seconds / nullif(before_seconds, 0), 3) AS ratio,
       CASE WHEN seconds > before_seconds THEN 'slower' ELSE 'faster' END AS direction,
       before_runs, runs AS after_runs, before_run, run_id AS after_run
FROM stepped
WHERE before_seconds IS NOT NULL
  AND abs(seconds - before_seconds) >= $min_seconds
  AND abs(seconds - before_seconds) >= $ratio * before_seconds
ORDER BY model, workload, abs(seconds - before_seconds) DESC, phase;
