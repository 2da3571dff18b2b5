-- Benchmark suite: the runs whose harness results a label key leaves off its axis
-- @internal used by the dashboards' pages
-- With a label as what a point is (nightly), a harness row's point is its holding run's value of it
-- (views/61_harness.sql: harness_point); the runs that hold HUD's performance and accuracy rows and
-- have no such label are on no point, and the page says how many. With the compiler version as key
-- nothing is left off: results of no known release are a point of their own.
-- @param key VARCHAR default=compiler what a point is: compiler (version) or a label key
SELECT count(DISTINCT h.run_id) AS runs, count(*) AS harness_rows
FROM harness_results h
JOIN runs r USING (run_id)
WHERE h.kind IN ('performance', 'accuracy')
  AND coalesce($key, 'compiler') <> 'compiler' AND harness_point($key, NULL, r.labels ->> $key, NULL) IS NULL;
