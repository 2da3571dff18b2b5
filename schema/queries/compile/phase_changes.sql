-- Where a compile phase of a workload got slower or faster: change points per phase along compiler versions
-- For each workload (views/12_workloads.sql) and phase, the compiler versions in release order
-- (compile/phase_series: the median over a version's runs of the workload) and each version whose
-- phase time differs from the workload's version before by at least `ratio` (relative) and
-- `min_seconds` (absolute, so sub-millisecond phases do not flap); never across workloads. Timings are
-- noisy: with one run a version, a change point says where to look, not that it is a regression.
-- @param model VARCHAR only this model
-- @param phase VARCHAR only phases whose name contains this
-- @param ratio DOUBLE default=0.3 relative change that counts (0.3: 30% slower or faster)
-- @param min_seconds DOUBLE default=0.05 absolute change that counts, in seconds
WITH series AS (
    SELECT w.model, w.workload, w.device, w.compiler_version, p.phase,
           count(*) AS runs, median(p.seconds) AS seconds
    FROM run_phase_times p
    JOIN run_workloads w USING (run_id)
    WHERE ($model IS NULL OR w.model = $model) AND ($phase IS NULL OR contains(p.phase, $phase))
    GROUP BY ALL
), stepped AS (
    SELECT *,
           lag(compiler_version) OVER w AS before_version,
           lag(seconds) OVER w AS before_seconds,
           lag(runs) OVER w AS before_runs
    FROM series
    WINDOW w AS (PARTITION BY workload, phase ORDER BY version_key(compiler_version), compiler_version)
)
SELECT model, workload, device, phase, before_version, compiler_version AS after_version,
       round(before_seconds, 6) AS before_seconds, round(seconds, 6) AS after_seconds,
       round(seconds / nullif(before_seconds, 0), 3) AS ratio,
       CASE WHEN seconds > before_seconds THEN 'slower' ELSE 'faster' END AS direction,
       before_runs, runs AS after_runs
FROM stepped
WHERE before_seconds IS NOT NULL
  AND abs(seconds - before_seconds) >= $min_seconds
  AND abs(seconds - before_seconds) >= $ratio * before_seconds
ORDER BY model, workload, abs(seconds - before_seconds) DESC, phase;
