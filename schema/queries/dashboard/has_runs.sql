-- Dashboard: whether the warehouse holds any run (every page asks before it draws)
-- @internal used by the dashboards' pages
SELECT count(*) > 0 AS has_runs FROM (SELECT 1 FROM runs LIMIT 1);
