-- A hit on an entry that an earlier miss of the same run wrote (same cache key: one graph met twice,
-- a recompile that hashes alike) does not make a run on an empty cache 'partial': run_rollups count
-- such hits (fx_own_hits, aot_own_hits) and run_cache's cache_temperature leaves them out. The runs
-- with cache lookups have their rollups made again by the migration's caller.
ALTER TABLE run_rollups ADD COLUMN fx_own_hits BIGINT;
ALTER TABLE run_rollups ADD COLUMN aot_own_hits BIGINT;
DELETE FROM run_rollups WHERE run_id IN (SELECT DISTINCT run_id FROM cache_events);
