-- Cache outcomes per run: lookups of the FX graph cache and the AOTAutograd cache, hits, misses,
-- bypasses, and the hit rates, defined once:
--   fx_hit_rate  = fx hits / fx lookups (hits + misses + bypasses); NULL when the run made none
--   aot_hit_rate = the same for the AOTAutograd cache
--   cache_temperature = 'off'  no lookup (caches disabled: every graph compiled afresh)
--                       'cold' lookups, no hit but on entries the run wrote itself (a graph met
--                              twice: the run compiled every distinct graph);
--                       'warm' every lookup hit;  'partial' some hit;
--                       NULL when a lookup's outcome is unknown (the rates too)
-- A warm run's compile time measures loading, not compiling: compare cold with cold.
CREATE OR REPLACE VIEW run_cache AS
-- the counts are the run's rollup (run_rollups_of: fx_lookups .. time_saved_s). Every run has one
-- (written with it; migrate fills any missing), so no join with runs: a query that picks a few runs
-- reads only their rollups instead of joining all of them first
SELECT
    c.run_id,
    coalesce(c.fx_lookups, 0) AS fx_lookups, coalesce(c.fx_hits, 0) AS fx_hits,
    coalesce(c.fx_misses, 0) AS fx_misses, coalesce(c.fx_bypasses, 0) AS fx_bypasses,
    coalesce(c.aot_lookups, 0) AS aot_lookups, coalesce(c.aot_hits, 0) AS aot_hits,
    coalesce(c.aot_misses, 0) AS aot_misses, coalesce(c.aot_bypasses, 0) AS aot_bypasses,
    coalesce(c.autotune_hits, 0) AS autotune_hits, coalesce(c.autotune_misses, 0) AS autotune_misses,
    -- a lookup logged without its outcome (2.4's fx_graph_cache_hash where nothing after it tells)
    -- leaves the rate and the temperature unknown, never a measured miss
    CASE WHEN c.fx_hits + c.fx_misses + c.fx_bypasses = c.fx_lookups THEN hit_rate(c.fx_hits, c.fx_lookups) END AS fx_hit_rate,
    CASE WHEN c.aot_hits + c.aot_misses + c.aot_bypasses = c.aot_lookups THEN hit_rate(c.aot_hits, c.aot_lookups) END AS aot_hit_rate,
    c.time_saved_s,
    CASE WHEN coalesce(c.fx_lookups, 0) + coalesce(c.aot_lookups, 0) = 0 THEN 'off'
         WHEN c.fx_hits + c.fx_misses + c.fx_bypasses + c.aot_hits + c.aot_misses + c.aot_bypasses
              < c.fx_lookups + c.aot_lookups THEN NULL
         WHEN c.fx_hits + c.aot_hits = c.fx_own_hits + c.aot_own_hits THEN 'cold'
         WHEN c.fx_hits + c.aot_hits = c.fx_lookups + c.aot_lookups THEN 'warm'
         ELSE 'partial' END AS cache_temperature
FROM run_rollups c;
