-- Dashboard: each model's longest series of compiles, in points (compiler versions of one workload)
-- @internal used by the dashboards' pages
-- What changed when opens on the first model here: one whose runs make a series to step through,
-- rather than the first name in order (a model of one run). Runs that hold a benchmark harness's
-- results and compiled nothing (harness_holders) are no point of a series, as analysis/changes.py
-- leaves them out.
SELECT model, max(points)::BIGINT AS points
FROM (SELECT model, workload, count(DISTINCT compiler_version) AS points
      FROM run_workloads
      WHERE run_id NOT IN (SELECT run_id FROM harness_holders) AND model IS NOT NULL
      GROUP BY model, workload)
GROUP BY model
ORDER BY points DESC, model;
