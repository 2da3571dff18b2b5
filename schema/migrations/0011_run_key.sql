-- run_key: a number a run, in the order runs were written, on runs and on every row of the run's.
-- Run ids are content hashes, random: every row group of a fact table spans them all, so finding
-- one run's rows by run_id reads the whole column. A run's rows are written together, so run_key
-- gives each row group a narrow min/max, and a query that finds a run's rows by its key
-- (`WHERE x.run_key = (SELECT run_key FROM runs WHERE run_id = $run_id)`) skips the rest by
-- their zone maps: at 100,000 runs, one run's lineage rows without reading 100 M others.
-- The loader gives a batch's runs the next keys; here, the runs a warehouse holds are numbered in
-- the order they were ingested.
ALTER TABLE runs ADD COLUMN run_key BIGINT;
UPDATE runs SET run_key = (
    SELECT k.n FROM (SELECT run_id, row_number() OVER (ORDER BY ingested_at, run_id) AS n FROM runs) k
    WHERE k.run_id = runs.run_id);
ALTER TABLE graphs ADD COLUMN run_key BIGINT;
UPDATE graphs SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = graphs.run_id);
ALTER TABLE ops ADD COLUMN run_key BIGINT;
UPDATE ops SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = ops.run_id);
ALTER TABLE kernels ADD COLUMN run_key BIGINT;
UPDATE kernels SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = kernels.run_id);
ALTER TABLE fusions ADD COLUMN run_key BIGINT;
UPDATE fusions SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = fusions.run_id);
ALTER TABLE layouts ADD COLUMN run_key BIGINT;
UPDATE layouts SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = layouts.run_id);
ALTER TABLE lineage ADD COLUMN run_key BIGINT;
UPDATE lineage SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = lineage.run_id);
ALTER TABLE artifacts ADD COLUMN run_key BIGINT;
UPDATE artifacts SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = artifacts.run_id);
ALTER TABLE ingest_errors ADD COLUMN run_key BIGINT;
UPDATE ingest_errors SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = ingest_errors.run_id);
ALTER TABLE compilations ADD COLUMN run_key BIGINT;
UPDATE compilations SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = compilations.run_id);
ALTER TABLE timings ADD COLUMN run_key BIGINT;
UPDATE timings SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = timings.run_id);
ALTER TABLE compile_events ADD COLUMN run_key BIGINT;
UPDATE compile_events SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = compile_events.run_id);
ALTER TABLE fusion_decisions ADD COLUMN run_key BIGINT;
UPDATE fusion_decisions SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = fusion_decisions.run_id);
ALTER TABLE guards ADD COLUMN run_key BIGINT;
UPDATE guards SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = guards.run_id);
ALTER TABLE cache_events ADD COLUMN run_key BIGINT;
UPDATE cache_events SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = cache_events.run_id);
ALTER TABLE autotune_choices ADD COLUMN run_key BIGINT;
UPDATE autotune_choices SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = autotune_choices.run_id);
ALTER TABLE shape_events ADD COLUMN run_key BIGINT;
UPDATE shape_events SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = shape_events.run_id);
ALTER TABLE run_rollups ADD COLUMN run_key BIGINT;
UPDATE run_rollups SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = run_rollups.run_id);
ALTER TABLE run_tallies ADD COLUMN run_key BIGINT;
UPDATE run_tallies SET run_key = (SELECT r.run_key FROM runs r WHERE r.run_id = run_tallies.run_id);
