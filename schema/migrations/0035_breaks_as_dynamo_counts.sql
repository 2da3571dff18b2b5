-- Graph breaks and recompiles as Dynamo counts them, every one; where each happened a breakdown;
-- one cause across releases (ingest/parsers/compile_causes.py makes these columns as it parses).
--
-- compile_events:
--   kind         'graph_break' is now a break Dynamo counts (counters["graph_break"], the harness's
--                graph_breaks); 'uncounted_break' a break that split the frame but that Dynamo files
--                under counters["unimplemented"] (a data-dependent branch of the frame itself, a break
--                it could not resume from). The record of a frame that could not handle its break and
--                fell back to eager is no graph break (its failure row, from the compile's metrics,
--                says it): such rows go.
--   origin       where it happened: 'model', 'package', 'torch' or 'stdlib' (replaces in_library,
--                which took a model living in site-packages, and torch.nn's layers, for library code)
--   cause_id     Dynamo's graph-break registry id of a break or failure (gbNNNN), pre-registry
--                messages mapped onto it; a recompile's guard kind
--   cause_title  the registry's title of that id (its gb_type); the guard kind
-- Rows written before get what their text says: kinds by the record's wording, origin from the
-- compiled frame's file (else the event's user file), cause_id from the registry link in the
-- message (2.8+); ingest a run again for pre-registry causes and recompiles' guard kinds.
-- run_rollups lose library_graph_breaks and library_recompiles (graph_breaks and recompiles now
-- count every frame) and gain uncounted_breaks; the runs with events have them made again.
-- timings.parent: a compile phase's enclosing span (a dynamo_timed span's parent in its thread), so
-- that `iwh changes` folds a phase that moved with its parent under it; NULL for rows written before.
ALTER TABLE timings ADD COLUMN parent VARCHAR;
ALTER TABLE compile_events ADD COLUMN origin VARCHAR;
ALTER TABLE compile_events ADD COLUMN cause_id VARCHAR;
ALTER TABLE compile_events ADD COLUMN cause_title VARCHAR;
ALTER TABLE compile_events DROP COLUMN in_library;
ALTER TABLE run_rollups DROP COLUMN library_graph_breaks;
ALTER TABLE run_rollups DROP COLUMN library_recompiles;
ALTER TABLE run_rollups ADD COLUMN uncounted_breaks BIGINT;

DELETE FROM run_rollups WHERE run_id IN (SELECT DISTINCT run_id FROM compile_events);

DELETE FROM compile_events
WHERE kind = 'graph_break'
  AND regexp_matches(left(coalesce(reason, ''), 400),
                     'Failed to handle graph break gracefully|Graph break: skip:|cannot properly resume from this graph break, which results in a skip');
UPDATE compile_events SET kind = 'uncounted_break'
WHERE kind = 'graph_break'
  AND regexp_matches(coalesce(reason, ''),
                     '^\s*(Graph Break Reason: |Reason: )?(Data-dependent (jump|branching)|Encountered graph break that we cannot resume from)');

UPDATE compile_events SET origin = o.origin
FROM (
    SELECT e.rowid AS id,
           CASE
               WHEN p IS NULL OR p = '' THEN NULL
               WHEN p LIKE '<frozen %' THEN 'stdlib'
               WHEN p LIKE '<eval_with_key>%' THEN 'torch'
               WHEN regexp_matches(p, '-packages/(torch|functorch|torchgen)/')
                    OR (NOT regexp_matches(p, '-packages/') AND regexp_matches(p, '/torch/'))
                    THEN CASE WHEN regexp_matches(p, 'torch/nn/modules/') AND NOT regexp_matches(p, 'torch/nn/modules/module\.py')
                              THEN 'model' ELSE 'torch' END
               WHEN regexp_matches(p, '/(site|dist)-packages/') THEN 'package'
               WHEN regexp_matches(p, '/lib/python[0-9][0-9.]*t?/') THEN 'stdlib'
               ELSE 'model'
           END AS origin
    FROM (
        SELECT e.rowid, CASE WHEN e.kind IN ('recompile', 'restart') THEN coalesce(f.frame_file, e.user_file)
                             ELSE coalesce(e.user_file, f.frame_file) END AS p
        FROM compile_events e
        LEFT JOIN (SELECT run_id, regexp_replace(compile_id, '/[^/]*$', '') AS frame, min(co_filename) AS frame_file
                   FROM compilations WHERE compile_id IS NOT NULL GROUP BY ALL) f
          ON f.run_id = e.run_id
         AND f.frame = regexp_replace(regexp_replace(e.compile_id, '_[0-9]+$', ''), '/[^/]*$', '')
    ) e
) o
WHERE compile_events.rowid = o.id;

UPDATE compile_events SET cause_id = nullif(regexp_extract(coalesce(reason, ''), '/gb/(gb[0-9]+)\.html', 1), '')
WHERE kind IN ('graph_break', 'uncounted_break', 'failure', 'restart');
