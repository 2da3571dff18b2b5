-- Cache-aware runs. One row per cache lookup a compile made, from the trace's records:
--   cache         fx_graph (Inductor's FX graph cache) | aot_autograd | autotune (a Triton kernel's
--                 configs) | bundled_fx_graph | precompile | dynamo
--   outcome       hit | miss | bypass (reason says why) | disabled | autotune's own states
--                 (only 1 config, force_disabled)
--   location      local | remote, where compilation_metrics says which served it
--   graph_id      the graph an FX graph or autotune lookup decided (its output code precedes it)
CREATE TABLE cache_events (
    run_id         VARCHAR NOT NULL,
    compile_id     VARCHAR,
    graph_id       VARCHAR,
    cache          VARCHAR,
    outcome        VARCHAR,
    reason         VARCHAR,
    cache_key      VARCHAR,
    location       VARCHAR,
    kernel_name    VARCHAR,
    time_saved_us  DOUBLE,
    source         VARCHAR,
    line           BIGINT
);
-- A graph says where it came from and what it cannot tell: cache_state is its FX graph cache
-- outcome (NULL: caches off, or no record); unknown_because says why counts are NULL (an FX graph
-- cache hit never schedules or fuses, so its pre/post fusion nodes are unknown, not 0).
ALTER TABLE graphs ADD COLUMN cache_state VARCHAR;
ALTER TABLE graphs ADD COLUMN unknown_because VARCHAR;
-- a kernel of a cache hit comes from the cached output code
ALTER TABLE kernels ADD COLUMN cache_state VARCHAR;
-- compilation_metrics' cache counts (2.11+; 2.6+ for the remote FX cache)
ALTER TABLE compilations ADD COLUMN fx_cache_local_hits BIGINT;
ALTER TABLE compilations ADD COLUMN fx_cache_local_misses BIGINT;
ALTER TABLE compilations ADD COLUMN fx_cache_remote_hits BIGINT;
ALTER TABLE compilations ADD COLUMN fx_cache_remote_misses BIGINT;
ALTER TABLE compilations ADD COLUMN aot_cache_local_hits BIGINT;
ALTER TABLE compilations ADD COLUMN aot_cache_local_misses BIGINT;
ALTER TABLE compilations ADD COLUMN aot_cache_remote_hits BIGINT;
ALTER TABLE compilations ADD COLUMN aot_cache_remote_misses BIGINT;
