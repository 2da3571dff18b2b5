-- caches_said_off(id): a file of the run says Inductor's caches were off (runs.caches_said, with the
-- file that said it in caches_said_by: the manifest's `caches: off`, as `iwh capture` writes it, an
-- Inductor config with force_disable_caches or without the FX graph cache, as compilation_metrics,
-- fx_graph_runnable or a Triton kernel's inductor_meta write it, TORCHINDUCTOR_FORCE_DISABLE_CACHES=1)
CREATE OR REPLACE MACRO caches_said_off(id) AS coalesce(
    (SELECT bool_or(caches_said = 'off') FROM runs WHERE run_id = id), false);
-- graphs_all_hit(id): every graph of the run read `hit` (graphs.cache_state) and it has one
CREATE OR REPLACE MACRO graphs_all_hit(id) AS coalesce(
    (SELECT count(*) > 0 AND count(*) = count(*) FILTER (WHERE cache_state = 'hit') FROM graphs WHERE run_id = id), false);
-- Cache outcomes per run: lookups of the FX graph cache and the AOTAutograd cache, hits, misses,
-- bypasses, and the hit rates, defined once:
--   fx_hit_rate  = fx hits / fx lookups (hits + misses + bypasses); NULL when the run made none
--   aot_hit_rate = the same for the AOTAutograd cache
--   cache_temperature = 'off'  no lookup, and a file of the run says caches were off (runs.caches_said:
--                              its manifest's `caches: off`, an Inductor config or environment with
--                              force_disable_caches or without the FX graph cache); a file saying
--                              caches were on, with no lookup read, leaves it unknown
--                       'cold' lookups, no hit but on entries the run wrote itself (a graph met
--                              twice: the run compiled every distinct graph);
--                       'warm' every lookup hit;  'partial' some hit;
--                       NULL when a lookup's outcome is unknown (the rates too), or where no cache
--                       record was read and nothing says caches were off (2.3 logs none; a run killed
--                       before any lookup; harness CSVs alone): lookups unknown, never 0; but a run
--                       whose every graph read `hit` (graphs.cache_state, read where no record is)
--                       is warm by the rule that made them hits
-- A warm run's compile time measures loading, not compiling: compare cold with cold.
CREATE OR REPLACE VIEW run_cache AS
-- the counts are the run's rollup (run_rollups_of: fx_lookups .. time_saved_s). Every run has one
-- (written with it; migrate fills any missing); runs and graphs are read only for a run with no lookup
WITH c AS (
    SELECT c.*, c.fx_lookups + c.aot_lookups = 0 AS unread,
           CASE WHEN c.fx_lookups + c.aot_lookups > 0 THEN NULL
                WHEN caches_said_off(c.run_id) THEN 'off'
                WHEN graphs_all_hit(c.run_id) THEN 'warm' END AS unread_temperature
    FROM run_rollups c
), shown AS (
    -- with no record read and no file saying caches were off, the counts are unknown, not 0
    SELECT c.* REPLACE (
        CASE WHEN NOT counts_unknown THEN c.fx_lookups END AS fx_lookups,
        CASE WHEN NOT counts_unknown THEN c.fx_hits END AS fx_hits,
        CASE WHEN NOT counts_unknown THEN c.fx_misses END AS fx_misses,
        CASE WHEN NOT counts_unknown THEN c.fx_bypasses END AS fx_bypasses,
        CASE WHEN NOT counts_unknown THEN c.aot_lookups END AS aot_lookups,
        CASE WHEN NOT counts_unknown THEN c.aot_hits END AS aot_hits,
        CASE WHEN NOT counts_unknown THEN c.aot_misses END AS aot_misses,
        CASE WHEN NOT counts_unknown THEN c.aot_bypasses END AS aot_bypasses)
    FROM (SELECT *, unread AND unread_temperature IS DISTINCT FROM 'off' AS counts_unknown FROM c) c
)
SELECT
    c.run_id,
    c.fx_lookups, c.fx_hits, c.fx_misses, c.fx_bypasses,
    c.aot_lookups, c.aot_hits, c.aot_misses, c.aot_bypasses,
    coalesce(c.autotune_hits, 0) AS autotune_hits, coalesce(c.autotune_misses, 0) AS autotune_misses,
    -- a lookup logged without its outcome (2.4's fx_graph_cache_hash where nothing after it tells)
    -- leaves the rate and the temperature unknown, never a measured miss
    CASE WHEN c.fx_hits + c.fx_misses + c.fx_bypasses = c.fx_lookups THEN hit_rate(c.fx_hits, c.fx_lookups) END AS fx_hit_rate,
    CASE WHEN c.aot_hits + c.aot_misses + c.aot_bypasses = c.aot_lookups THEN hit_rate(c.aot_hits, c.aot_lookups) END AS aot_hit_rate,
    c.time_saved_s,
    CASE WHEN c.unread THEN c.unread_temperature
         WHEN c.fx_hits + c.fx_misses + c.fx_bypasses + c.aot_hits + c.aot_misses + c.aot_bypasses
              < c.fx_lookups + c.aot_lookups THEN NULL
         WHEN c.fx_hits + c.aot_hits = c.fx_own_hits + c.aot_own_hits THEN 'cold'
         WHEN c.fx_hits + c.aot_hits = c.fx_lookups + c.aot_lookups THEN 'warm'
         ELSE 'partial' END AS cache_temperature
FROM shown c;
