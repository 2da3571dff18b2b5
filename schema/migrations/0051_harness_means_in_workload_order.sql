-- HUD's suite means are now summed in workload order (views/61_harness.sql: harness_summary_of), so
-- the kept numbers no longer depend on the order runs were ingested in. The kept points are made
-- again from every row by the migration's caller (store/rollups.py: fill_missing), as for 0034.
DELETE FROM harness_point_runs;
DELETE FROM harness_point_summaries;
DELETE FROM harness_records;
