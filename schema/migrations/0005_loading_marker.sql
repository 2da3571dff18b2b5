-- Runs whose rows are being written in parts (long trace logs: one transaction per spilled part,
-- so the writer's memory stays flat). The run's `runs` row is written last, with the rest, and the
-- marker removed in that same transaction; a marker left by a crash tells the next ingest which
-- partial rows to delete.
CREATE TABLE _loading (run_id VARCHAR PRIMARY KEY);
