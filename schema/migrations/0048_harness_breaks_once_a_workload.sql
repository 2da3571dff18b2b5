-- A harness-only run's graph breaks count each workload once (its accuracy row's, else its
-- performance row's), as harness_models_of does, not each CSV row: CI writes both rows for a model.
-- The rollups are made again by the migration's caller.
DELETE FROM run_rollups;
