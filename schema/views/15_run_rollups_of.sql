-- run_rollups_of(ids): the per-run figures that most queries and pages need, summed from the fact
-- tables for the runs `ids` names. The loader stores them in run_rollups as it writes a run (same
-- transaction), so a query over 100,000 runs reads one row a run instead of their millions of
-- kernel, graph and timing rows. The one definition of each figure:
--   graphs .. post_fusion_nodes  sums over the run's graphs; pre and post fusion node sums are NULL
--                                (unknown) when any graph has either count unknown: a graph whose IR
--                                never came, or a cache hit that wrote none (fusion_rate = 1 - post / pre).
--                                kernel_count and extern_kernel_count: the count of what the run's
--                                output code says, summed over the graphs whose code came (a run killed
--                                after some graphs has their count); NULL (unknown, never 0) when no graph
--                                of the run has code: graphs whose code never came (a run killed in
--                                Inductor, an export), or none and the run did not finish
--                                (run_unfinished) or holds no file kernels are read from
--                                (views/12_workloads.sql: kernels_unseen, whose graphs are NULL too)
--   generated_kernel_rows, extern_calls   rows of kernels (generated or not); *_kernels: generated
--                                rows of that category
--   graph_breaks, recompiles     compile_events of that kind, every frame's (the model's, an installed
--                                package's, torch's: compile_events.origin is a breakdown, not a filter):
--                                graph breaks as Dynamo counts them (counters["graph_break"], the
--                                harness's graph_breaks), a recompile one row however many guards
--                                failed (compile_events.details). Where the run's compile artifacts
--                                (a TORCH_TRACE log, TORCH_LOGS) cannot tell its graph breaks (an
--                                unknown_break: a log of a release before 2.6, ingest/parsers/trace_breaks.py)
--                                or it has none (harness_holders: the benchmark harness's CSVs alone),
--                                graph_breaks is the harness's count, summed over the run's performance
--                                and accuracy rows that have one (Dynamo's counters["graph_break"] of each
--                                model's process); else NULL. The artifacts win where both exist: their
--                                rows are the breaks the break pages list, the same counter read break by break.
--                                A TORCH_TRACE log and TORCH_LOGS text of one run: of each fact, the trace's
--                                rows stand where its release writes a record of it (graph breaks from 2.4:
--                                restart_reasons, 2.6: a record a break; recompiles from 2.5), compile by
--                                compile; where it writes none, TORCH_LOGS' rows do (ingest/reader_steps.py
--                                read_torch_logs, trace_records.told_by_trace). TORCH_LOGS before 2.6 log a
--                                break once per place: a recompile of a function that logged one makes an
--                                unknown_break (its break went unlogged), so graph_breaks is unknown there.
--                                What tells them at all: a trace log tells its compiles' breaks (and
--                                recompiles from 2.5: a trace before writes an unknown_recompile);
--                                TORCH_LOGS tell breaks and recompiles where their logger was on (a line
--                                of it made a row, or `iwh capture` wrote the manifest, whose TORCH_LOGS
--                                always name both); a profile, a debug tree, torch-spyre files tell
--                                neither: graph_breaks is then the harness's count, else NULL, recompiles NULL
--   uncounted_breaks             breaks that split a frame but that Dynamo files as unimplemented, not
--                                as graph breaks: a data-dependent branch of the frame itself, a break
--                                it could not resume from; NULL where the log cannot tell them (an
--                                unknown_uncounted row: a release before 2.6 writes no record of them)
--                                and where no file tells the run's graph breaks (harness_holders count none)
--   failures, fallbacks, restarts  failed frame compiles (every frame: a failure in library code
--                                fails the user's step as much), those after which the frame ran
--                                eagerly (compile_events.fallback; NULL where one failure's is: a hard
--                                failure before 2.6, whose log does not say whether errors were
--                                suppressed), and Dynamo's restarts of a frame's analysis, as its attempt
--                                numbers count them (a restart row per attempt: the reasons Dynamo kept,
--                                and a row of no reason for each it dropped or never named);
--                                NULL without a trace log (nothing else records them; TORCH_LOGS do not)
--   compile_records .. cxx_triton_compile_s   compile time from compilation_metrics, in seconds:
--     PyTorch's cumulative timers nest (dynamo ⊇ aot_autograd ⊇ inductor ⊇ code gen); the parts
--     are the exclusive ones, so dynamo_s + aot_s + inductor_s + code_gen_s = total_s:
--       total_s    = dynamo_cumulative + the lazily compiled backward's bwd_backward_cumulative
--       dynamo_s   = dynamo_cumulative - aot_autograd_cumulative (tracing, guards, bytecode)
--       aot_s      = aot_autograd_cumulative - inductor_cumulative (+ bwd_backward - bwd_inductor)
--       inductor_s = inductor_cumulative - inductor_code_gen_cumulative (+ the same for bwd_)
--       code_gen_s = inductor_code_gen_cumulative (+ bwd_): scheduling, codegen, compiling the code
--     2.3 to 2.5 write these four timers in seconds alone, as entire_frame_compile_time_s,
--     backend_compile_time_s, inductor_compile_time_s and code_gen_time_s: read where the others lack.
--     2.5's bwd_compilation_metrics has only inductor_compile_time_s and code_gen_time_s (the backward's
--     compile_fx_inner, all but a few ms of its bw_compiler): the backward's total and Inductor time
--     both read the first there. 2.4 builds a backward record but writes none (utils.py
--     record_compilation_metrics: "Currently only record fwd compilation metrics"), and its lazily
--     compiled backward runs after the forward's record: a run of the pre-2.6 timers with a backward
--     graph and no backward record has total_s, aot_s, inductor_s and code_gen_s NULL (a forward-only
--     sum would read as a whole one next to 2.5's or 2.6's); dynamo_s, Dynamo's own, is whole (Dynamo
--     does not trace the backward). A backward 2.4 compiled with the forward (dynamic shapes saved
--     for it) was timed within the forward's record, but the files do not tell which it was.
--     A run that did not finish (run_unfinished) has total_s NULL: the compile it died in has no
--     record, so the sum of the others is no whole compile time; the parts are those of its records
--     autotune_s and cxx_triton_compile_s (the async compile of the generated C++/Triton) are parts
--     of code_gen_s. A part is NULL when a release does not report the timers it needs.
--   kernel_timings .. extern_launches   kernel time from torch.profiler: generated = kernels
--     Inductor generated in that run (by name), extern = other kernels inside compiled regions,
--     eager = kernels outside any compiled region; compiled_kernel_us = generated + extern
--     (kernels inside a compiled region); max_kernel_us = the run's slowest profiled kernel (its
--     time per compile id, phase and name, over every launch site)
--   workload                     the run's workload (views/12_workloads.sql), kept so that grouping
--                                100,000 runs by it does not read their labels' JSON (0.1 to 0.5 s)
--   profiler_files               profiler traces read for the run (a CPU run's has no kernel events)
--   inductor_config_hash         md5 of the run's first (least) compilation_metrics inductor_config;
--                                the text is in inductor_configs
--   fx_lookups .. time_saved_s   cache lookups by outcome (run_cache reads them); *_own_hits the hits on
--                                an entry an earlier miss of the same run wrote; time_saved_s what each
--                                compile's outermost hits saved (the caches nest: never their sum)
-- A run's rows are found by its run key (migration 0011), not its id: keys grow in write order, so
-- the zone maps of a table of millions of rows skip every row group but the runs'. The loader
-- calls these in the transaction that writes a batch, once its rows are in. Only writers call
-- them: a new macro name here would make readers of a warehouse no writer has opened since ask
-- for `iwh migrate` (store/migrate.py check_current), a changed body does not.
DROP MACRO TABLE IF EXISTS run_configs_in;  -- the forms over named tables that these replace
DROP MACRO TABLE IF EXISTS run_rollups_in;
DROP MACRO TABLE IF EXISTS run_tallies_in;

-- run_configs_of(ids): each run's Inductor config (the least of its compiles' texts) and its md5
CREATE OR REPLACE MACRO run_configs_of(ids) AS TABLE
SELECT run_id, md5(c) AS config_hash, c AS text
FROM (SELECT run_id, min(inductor_config) AS c FROM compilations
      WHERE inductor_config IS NOT NULL AND run_key IN (SELECT run_key FROM runs WHERE run_id IN (SELECT unnest(ids)))
      GROUP BY run_id);

CREATE OR REPLACE MACRO run_rollups_of(ids) AS TABLE
WITH picked AS (
    -- the runs asked for, once: every part below keeps their rows
    SELECT run_id, run_key, workload_key(model, device, rank, labels, workload_labels()) AS workload,
           run_unfinished(labels) IS NOT NULL AS unfinished,
           -- `iwh capture` wrote the manifest (its own keys): its TORCH_LOGS always had graph_breaks
           -- and recompiles on (ingest/capture_command.py CAPTURE_ENV)
           (labels ->> 'command') IS NOT NULL AND (labels ->> 'exit_code') IS NOT NULL AS captured
    FROM runs WHERE run_id IN (SELECT unnest(ids))
), g AS (
    SELECT
        run_id,
        count(graph_id)                         AS graphs,
        count(*) FILTER (WHERE phase = 'backward') AS backward_graphs,
        -- NULL: no graph's code came, or a graph loaded from the cache logged none (its kernels
        -- are unknown, so the run's sum is too)
        CASE WHEN count(*) FILTER (WHERE cache_state = 'hit' AND kernel_count IS NULL) = 0
             THEN sum(kernel_count) END::BIGINT
                                                AS kernel_count,
        CASE WHEN count(*) FILTER (WHERE cache_state = 'hit' AND extern_kernel_count IS NULL) = 0
             THEN sum(extern_kernel_count) END::BIGINT
                                                AS extern_kernel_count,
        -- NULL where a graph's node counts are unknown (its IR never came, a cache hit wrote none):
        -- a sum over the other graphs would read as the run's, and its fusion rate with it
        CASE WHEN count(*) FILTER (WHERE pre_fusion_nodes IS NULL OR post_fusion_nodes IS NULL) = 0
             THEN sum(pre_fusion_nodes) END::BIGINT AS pre_fusion_nodes,
        CASE WHEN count(*) FILTER (WHERE pre_fusion_nodes IS NULL OR post_fusion_nodes IS NULL) = 0
             THEN sum(post_fusion_nodes) END::BIGINT AS post_fusion_nodes
    FROM graphs WHERE run_key IN (SELECT run_key FROM picked) GROUP BY run_id
), k AS (
    SELECT
        run_id,
        count(*) FILTER (WHERE generated)     AS generated_kernel_rows,
        count(*) FILTER (WHERE NOT generated) AS extern_calls,
        count(*) FILTER (WHERE generated AND category = 'pointwise')            AS pointwise_kernels,
        count(*) FILTER (WHERE generated AND category = 'reduction')            AS reduction_kernels,
        count(*) FILTER (WHERE generated AND category = 'persistent_reduction') AS persistent_reduction_kernels,
        count(*) FILTER (WHERE generated AND category = 'template')             AS template_kernels,
        count(*) FILTER (WHERE generated AND category = 'foreach')              AS foreach_kernels
    FROM kernels WHERE run_key IN (SELECT run_key FROM picked) GROUP BY run_id
), e AS (
    SELECT
        run_id,
        count(*) FILTER (WHERE kind = 'graph_break')                AS graph_breaks,
        count(*) FILTER (WHERE kind = 'unknown_break')              AS unknown_breaks,
        count(*) FILTER (WHERE kind = 'unknown_uncounted')          AS unknown_uncounted,
        count(*) FILTER (WHERE kind = 'recompile')                  AS recompiles,
        count(*) FILTER (WHERE kind = 'uncounted_break')            AS uncounted_breaks,
        count(*) FILTER (WHERE kind = 'failure')                    AS failures,
        count(*) FILTER (WHERE kind = 'failure' AND fallback)       AS fallbacks,
        count(*) FILTER (WHERE kind = 'failure' AND fallback IS NULL) AS unknown_fallbacks,
        count(*) FILTER (WHERE kind = 'restart')                    AS restarts,
        count(*) FILTER (WHERE kind = 'unknown_recompile')          AS unknown_recompiles,
        -- the TORCH_LOGS loggers whose lines the run's logs hold: a logger seen was on (graph_breaks
        -- logs a frame that fell back to eager too: a failure, no break Dynamo counts)
        count(*) FILTER (WHERE source = 'torch_logs' AND kind IN ('graph_break', 'uncounted_break', 'unknown_break', 'failure')) AS logged_breaks,
        count(*) FILTER (WHERE source = 'torch_logs' AND kind = 'recompile') AS logged_recompiles
    FROM compile_events
    WHERE run_key IN (SELECT run_key FROM picked)
    GROUP BY run_id
), held AS (
    -- what the run's files are: whether any feeds the kernels table (feeds_kernels), and
    -- whether it holds harness results and nothing a compile wrote (harness_only)
    SELECT run_id,
           bool_or(feeds_kernels(kind)) AS kernel_files,
           harness_only(kind) AS harness_only,
           bool_or(kind = 'torch_trace') AS traced,
           bool_or(kind = 'torch_logs')  AS logged
    FROM artifacts WHERE run_key IN (SELECT run_key FROM picked) GROUP BY run_id
), hb AS (
    -- Dynamo's graph-break counter as the benchmark harness wrote it, once a workload: its latest
    -- accuracy row's, else its latest performance row's (harness_models_of's rule: CI writes both
    -- for a model, and a model's repeats are one workload), summed over the run's workloads
    SELECT run_id, sum(graph_breaks)::BIGINT AS graph_breaks
    FROM (
        SELECT run_id,
               coalesce(arg_max_null(graph_breaks, (file, line)) FILTER (WHERE kind = 'accuracy'),
                        arg_max_null(graph_breaks, (file, line)) FILTER (WHERE kind = 'performance')) AS graph_breaks
        FROM harness_results
        WHERE kind IN ('performance', 'accuracy') AND run_key IN (SELECT run_key FROM picked)
        GROUP BY run_id, suite, backend, workload
    )
    GROUP BY run_id
), pf AS (
    SELECT run_id, count(*) AS profiler_files
    FROM artifacts WHERE kind = 'profiler' AND run_key IN (SELECT run_key FROM picked) GROUP BY run_id
), cfg AS (
    SELECT run_id, config_hash AS inductor_config_hash FROM run_configs_of(ids)
), cache AS (
    SELECT
        run_id,
        count(*) FILTER (WHERE cache = 'fx_graph')                           AS fx_lookups,
        count(*) FILTER (WHERE cache = 'fx_graph' AND outcome = 'hit')       AS fx_hits,
        count(*) FILTER (WHERE cache = 'fx_graph' AND outcome = 'miss')      AS fx_misses,
        count(*) FILTER (WHERE cache = 'fx_graph' AND outcome = 'bypass')    AS fx_bypasses,
        count(*) FILTER (WHERE cache = 'aot_autograd')                       AS aot_lookups,
        count(*) FILTER (WHERE cache = 'aot_autograd' AND outcome = 'hit')   AS aot_hits,
        count(*) FILTER (WHERE cache = 'aot_autograd' AND outcome = 'miss')  AS aot_misses,
        count(*) FILTER (WHERE cache = 'aot_autograd' AND outcome = 'bypass') AS aot_bypasses,
        count(*) FILTER (WHERE cache = 'autotune' AND outcome = 'hit')       AS autotune_hits,
        count(*) FILTER (WHERE cache = 'autotune' AND outcome = 'miss')      AS autotune_misses,
        count(*) FILTER (WHERE cache = 'fx_graph' AND own_entry)             AS fx_own_hits,
        count(*) FILTER (WHERE cache = 'aot_autograd' AND own_entry)         AS aot_own_hits
    FROM (
        -- a hit on the entry an earlier miss of the same run wrote (one graph met twice): the run
        -- compiled that graph itself, so the hit says nothing of the cache it started with
        SELECT *, outcome = 'hit' AND cache_key IS NOT NULL AND cache_key IN (
                   SELECT m.cache_key FROM cache_events m
                   WHERE m.run_key = c.run_key AND m.cache = c.cache AND m.outcome = 'miss' AND m.line < c.line)
               AS own_entry
        FROM cache_events c
        WHERE cache IN ('fx_graph', 'aot_autograd', 'autotune') AND run_key IN (SELECT run_key FROM picked))
    GROUP BY run_id
), saved AS (
    -- the caches nest: an AOTAutograd entry holds the Inductor graph the FX graph cache holds, whose
    -- compile holds the autotuning: a compile saved what its outermost hits saved, never their sum
    SELECT run_id, sum(us) / 1e6 AS time_saved_s
    FROM (SELECT run_id, compile_id,
                 coalesce(sum(time_saved_us) FILTER (WHERE cache = 'aot_autograd'),
                          sum(time_saved_us) FILTER (WHERE cache = 'fx_graph'),
                          sum(time_saved_us) FILTER (WHERE cache = 'autotune')) AS us
          FROM cache_events
          WHERE outcome = 'hit' AND cache IN ('fx_graph', 'aot_autograd', 'autotune')
            AND run_key IN (SELECT run_key FROM picked)
          GROUP BY run_id, compile_id)
    GROUP BY run_id
), ct AS (
    SELECT
        run_id,
        count(*)                                                                              AS records,
        coalesce(sum(duration_us) FILTER (WHERE name = 'dynamo_cumulative_compile_time'),
                 sum(duration_us) FILTER (WHERE name = 'entire_frame_compile_time'))            AS dynamo,
        coalesce(sum(duration_us) FILTER (WHERE name = 'aot_autograd_cumulative_compile_time'),
                 sum(duration_us) FILTER (WHERE name = 'backend_compile_time'))                 AS aot,
        coalesce(sum(duration_us) FILTER (WHERE name = 'inductor_cumulative_compile_time'),
                 sum(duration_us) FILTER (WHERE name = 'inductor_compile_time'))                AS ind,
        coalesce(sum(duration_us) FILTER (WHERE name = 'inductor_code_gen_cumulative_compile_time'),
                 sum(duration_us) FILTER (WHERE name = 'code_gen_time'))                        AS cg,
        coalesce(sum(duration_us) FILTER (WHERE name = 'bwd_backward_cumulative_compile_time'),
                 sum(duration_us) FILTER (WHERE name = 'bwd_inductor_compile_time'), 0)                 AS bwd,
        coalesce(sum(duration_us) FILTER (WHERE name = 'bwd_inductor_cumulative_compile_time'),
                 sum(duration_us) FILTER (WHERE name = 'bwd_inductor_compile_time'), 0)                 AS bwd_ind,
        coalesce(sum(duration_us) FILTER (WHERE name = 'bwd_inductor_code_gen_cumulative_compile_time'),
                 sum(duration_us) FILTER (WHERE name = 'bwd_code_gen_time'), 0)                         AS bwd_cg,
        sum(duration_us) FILTER (WHERE name IN ('compile_time_autotune_time', 'bwd_compile_time_autotune_time')) AS autotune,
        sum(duration_us) FILTER (WHERE name IN ('triton_compile_time', 'bwd_triton_compile_time'))              AS triton,
        count(*) FILTER (WHERE name = 'entire_frame_compile_time')                            AS frames,
        count(*) FILTER (WHERE starts_with(name, 'bwd_'))                                     AS bwd_records,
        count(*) FILTER (WHERE name = 'dynamo_cumulative_compile_time')                       AS cumulative_records
    FROM timings
    WHERE kind = 'compile' AND source = 'compilation_metrics' AND run_key IN (SELECT run_key FROM picked)
    GROUP BY run_id
), generated AS (
    SELECT DISTINCT run_id, kernel_name, 'generated' AS category
    FROM kernels WHERE generated AND run_key IN (SELECT run_key FROM picked)
), coded AS (
    SELECT DISTINCT run_id FROM kernels WHERE run_key IN (SELECT run_key FROM picked)
), tk AS (
    -- each profiled kernel, generated or not by views/14_kernel_names.sql's one rule
    SELECT t.*, profiled_kernel_category(gk.category, c.run_id IS NOT NULL, t.compile_id, t.name) IS NOT NULL AS gen
    FROM timings t
    LEFT JOIN generated gk ON gk.run_id = t.run_id AND gk.kernel_name = t.name
    LEFT JOIN coded c ON c.run_id = t.run_id
    WHERE t.kind = 'kernel' AND t.run_key IN (SELECT run_key FROM picked)
), prof AS (
    SELECT
        t.run_id,
        count(*)                                                                      AS kernel_timings,
        count(*) FILTER (WHERE t.source = 'profiler')                                 AS profiled_kernels,
        sum(t.duration_us) FILTER (WHERE t.source = 'profiler')                       AS kernel_us,
        sum(t.duration_us) FILTER (WHERE t.source = 'profiler' AND t.gen) AS generated_us,
        sum(t.duration_us) FILTER (WHERE t.source = 'profiler' AND NOT t.gen AND t.compile_id IS NOT NULL) AS extern_us,
        sum(t.duration_us) FILTER (WHERE t.source = 'profiler' AND NOT t.gen AND t.compile_id IS NULL) AS eager_us,
        sum(t.calls) FILTER (WHERE t.source = 'profiler' AND t.gen) AS generated_launches,
        sum(t.calls) FILTER (WHERE t.source = 'profiler' AND NOT t.gen AND t.compile_id IS NOT NULL) AS extern_launches,
        sum(t.duration_us) FILTER (WHERE t.source = 'profiler' AND t.compile_id IS NOT NULL) AS compiled_kernel_us
    FROM tk t
    GROUP BY t.run_id
), slowest AS (
    -- a kernel's time summed over its launch sites (an extern op's kernels are timed per call)
    SELECT run_id, max(us) AS max_kernel_us
    FROM (SELECT run_id, compile_id, phase, name, sum(duration_us) AS us FROM timings
          WHERE kind = 'kernel' AND source = 'profiler' AND run_key IN (SELECT run_key FROM picked) GROUP BY ALL)
    GROUP BY run_id
)
SELECT
    p.run_id,
    p.workload,
    CASE WHEN g.graphs IS NULL AND NOT coalesce(held.kernel_files, false) THEN NULL
         ELSE coalesce(g.graphs, 0) END::BIGINT AS graphs,
    CASE WHEN g.kernel_count IS NOT NULL THEN g.kernel_count
         WHEN g.graphs > 0 OR NOT coalesce(held.kernel_files, false) OR p.unfinished THEN NULL
         ELSE 0 END::BIGINT AS kernel_count,
    CASE WHEN g.extern_kernel_count IS NOT NULL THEN g.extern_kernel_count
         WHEN g.graphs > 0 OR NOT coalesce(held.kernel_files, false) OR p.unfinished THEN NULL
         ELSE 0 END::BIGINT AS extern_kernel_count,
    g.pre_fusion_nodes,
    g.post_fusion_nodes,
    coalesce(k.generated_kernel_rows, 0)::BIGINT AS generated_kernel_rows,
    coalesce(k.extern_calls, 0)::BIGINT         AS extern_calls,
    coalesce(k.pointwise_kernels, 0)::BIGINT    AS pointwise_kernels,
    coalesce(k.reduction_kernels, 0)::BIGINT    AS reduction_kernels,
    coalesce(k.persistent_reduction_kernels, 0)::BIGINT AS persistent_reduction_kernels,
    coalesce(k.template_kernels, 0)::BIGINT     AS template_kernels,
    coalesce(k.foreach_kernels, 0)::BIGINT      AS foreach_kernels,
    CASE WHEN e.unknown_breaks > 0 OR NOT tells.breaks THEN hb.graph_breaks
         ELSE coalesce(e.graph_breaks, 0) END::BIGINT AS graph_breaks,
    CASE WHEN tells.recompiles THEN coalesce(e.recompiles, 0) END::BIGINT AS recompiles,
    CASE WHEN tells.breaks AND coalesce(e.unknown_uncounted, 0) = 0 THEN coalesce(e.uncounted_breaks, 0)
         END::BIGINT AS uncounted_breaks,
    CASE WHEN tells.compiles THEN coalesce(e.failures, 0) END::BIGINT AS failures,
    CASE WHEN tells.compiles AND coalesce(e.unknown_fallbacks, 0) = 0 THEN coalesce(e.fallbacks, 0) END::BIGINT AS fallbacks,
    CASE WHEN tells.compiles THEN coalesce(e.restarts, 0) END::BIGINT AS restarts,
    coalesce(pf.profiler_files, 0)::BIGINT      AS profiler_files,
    coalesce(ct.records, 0)::BIGINT             AS compile_records,
    ct.frames::BIGINT                           AS frames,
    CASE WHEN NOT tells.backward_lost AND NOT p.unfinished THEN (ct.dynamo + ct.bwd) / 1e6 END AS total_s,
    (ct.dynamo - ct.aot) / 1e6                  AS dynamo_s,
    CASE WHEN NOT tells.backward_lost THEN (ct.aot - ct.ind + ct.bwd - ct.bwd_ind) / 1e6 END AS aot_s,
    CASE WHEN NOT tells.backward_lost THEN (ct.ind - ct.cg + ct.bwd_ind - ct.bwd_cg) / 1e6 END AS inductor_s,
    CASE WHEN NOT tells.backward_lost THEN (ct.cg + ct.bwd_cg) / 1e6 END AS code_gen_s,
    ct.autotune / 1e6                           AS autotune_s,
    ct.triton / 1e6                             AS cxx_triton_compile_s,
    coalesce(prof.kernel_timings, 0)::BIGINT    AS kernel_timings,
    coalesce(prof.profiled_kernels, 0)::BIGINT  AS profiled_kernels,
    prof.kernel_us,
    prof.generated_us,
    prof.extern_us,
    prof.eager_us,
    prof.generated_launches::BIGINT             AS generated_launches,
    prof.extern_launches::BIGINT                AS extern_launches,
    prof.compiled_kernel_us,
    slowest.max_kernel_us,
    cfg.inductor_config_hash,
    coalesce(cache.fx_lookups, 0)::BIGINT       AS fx_lookups,
    coalesce(cache.fx_hits, 0)::BIGINT          AS fx_hits,
    coalesce(cache.fx_misses, 0)::BIGINT        AS fx_misses,
    coalesce(cache.fx_bypasses, 0)::BIGINT      AS fx_bypasses,
    coalesce(cache.aot_lookups, 0)::BIGINT      AS aot_lookups,
    coalesce(cache.aot_hits, 0)::BIGINT         AS aot_hits,
    coalesce(cache.aot_misses, 0)::BIGINT       AS aot_misses,
    coalesce(cache.aot_bypasses, 0)::BIGINT     AS aot_bypasses,
    coalesce(cache.autotune_hits, 0)::BIGINT    AS autotune_hits,
    coalesce(cache.autotune_misses, 0)::BIGINT  AS autotune_misses,
    coalesce(cache.fx_own_hits, 0)::BIGINT      AS fx_own_hits,
    coalesce(cache.aot_own_hits, 0)::BIGINT     AS aot_own_hits,
    saved.time_saved_s
FROM picked p
LEFT JOIN g USING (run_id)
LEFT JOIN k USING (run_id)
LEFT JOIN e USING (run_id)
LEFT JOIN held USING (run_id)
LEFT JOIN hb USING (run_id)
LEFT JOIN pf USING (run_id)
LEFT JOIN ct USING (run_id)
LEFT JOIN prof USING (run_id)
LEFT JOIN slowest USING (run_id)
LEFT JOIN cfg USING (run_id)
LEFT JOIN cache USING (run_id)
LEFT JOIN saved USING (run_id)
-- which compile events the run's files can tell (the header's rule): a trace log tells its compiles'
-- breaks, restarts and failures (its recompiles from 2.5: an unknown_recompile says it cannot);
-- TORCH_LOGS tell breaks and recompiles where their logger was on; nothing else tells any
CROSS JOIN LATERAL (SELECT
    coalesce(held.traced, false) OR (coalesce(held.logged, false) AND (p.captured OR coalesce(e.logged_breaks, 0) > 0)) AS breaks,
    NOT coalesce(held.harness_only, false) AND (
        (coalesce(held.logged, false) AND (p.captured OR coalesce(e.logged_recompiles, 0) > 0))
        OR (coalesce(held.traced, false) AND coalesce(e.unknown_recompiles, 0) = 0)) AS recompiles,
    coalesce(held.traced, false) AS compiles,
    -- a backward compiled by a release whose timers are the pre-2.6 ones (entire_frame_compile_time_s)
    -- and that wrote no backward record (2.4): its time is in no file
    coalesce(g.backward_graphs > 0 AND ct.frames > 0 AND ct.cumulative_records = 0 AND ct.bwd_records = 0, false)
        AS backward_lost) AS tells;

-- run_tallies_of(ids): rows of run_tallies for the runs `ids` names (see migration 0010)
CREATE OR REPLACE MACRO run_tallies_of(ids) AS TABLE
WITH picked AS (
    SELECT run_id, run_key, labels FROM runs WHERE run_id IN (SELECT unnest(ids))
)
SELECT run_id, 'fusion_refusal' AS kind, reason AS name, count(*) AS n
FROM fusion_decisions
WHERE decision = 'refused' AND run_key IN (SELECT run_key FROM picked)
GROUP BY ALL
UNION ALL
SELECT run_id, 'extern_op', coalesce(signature, kernel_name), count(*)
FROM kernels
WHERE NOT generated AND run_key IN (SELECT run_key FROM picked)
GROUP BY ALL
UNION ALL
SELECT p.run_id, 'label', j.key || '=' || (j.value ->> '$'), 1
FROM picked p, json_each(p.labels) AS j
WHERE j.type IN ('VARCHAR', 'BIGINT', 'UBIGINT', 'BOOLEAN');
