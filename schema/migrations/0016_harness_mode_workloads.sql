-- The benchmark harness's mode is now part of a run's workload (views/12_workloads.sql: the label
-- `harness`, performance or accuracy): the rollups of runs labelled so keep their old workload key,
-- which put a model's accuracy and performance processes in one workload, so they are dropped and
-- made again by the migration's caller (fill_rollups). Runs ingested before the ingest told a
-- harness process's mode from the CSVs beside it have no such label: ingest them again to key them.
DELETE FROM run_rollups
WHERE run_id IN (SELECT run_id FROM runs WHERE labels ->> 'harness' IS NOT NULL);
