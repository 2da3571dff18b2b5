-- Spyre kernels: profiled time by kernel identity, with their ATen ops and source lines
-- A torch-spyre profiler event is named by its kernel identity (`spyre_kernel_v1_<summary>_<key>`,
-- the step suffix dropped): joined to the provenance sidecar's identity, the debug handles it binds
-- and the handles those were fused from, it gives the model lines the time was spent on. Identities
-- with no profiled event are listed too (calls 0). compiles: how many compiles the identity occurs in.
-- One row per identity and run: nothing is summed over runs (see a workload's runs side by side with
-- its `workload` column, views/12_workloads.sql).
-- @param run VARCHAR only this run (its id, or a prefix of it)
WITH RECURSIVE reach(run_id, identity_key, handle_id) AS (
    SELECT run_id, identity_key, unnest(handle_ids) FROM spyre_kernel_identities
    UNION
    SELECT r.run_id, r.identity_key, unnest(h.fused_from)
    FROM reach r JOIN spyre_handles h ON h.run_id = r.run_id AND h.handle_id = r.handle_id
),
lines AS (
    SELECT r.run_id, r.identity_key,
           string_agg(DISTINCT h.source_file || ':' || h.source_line, ', ' ORDER BY h.source_file || ':' || h.source_line)
               AS source_lines
    FROM reach r JOIN spyre_handles h ON h.run_id = r.run_id AND h.handle_id = r.handle_id
    WHERE h.source_line IS NOT NULL
    GROUP BY ALL
),
events AS (
    SELECT run_id, name, CAST(sum(calls) AS BIGINT) AS calls, sum(duration_us) AS us
    FROM timings WHERE source = 'profiler' AND kind = 'kernel' AND starts_with(name, 'spyre_kernel_v')
    GROUP BY ALL
),
compiles AS (
    SELECT run_id, identity_key, count(DISTINCT compile_key) AS n FROM spyre_kernel_occurrences GROUP BY ALL
)
SELECT
    r.model,
    i.event_name_base,
    i.identity_key,
    coalesce(e.calls, 0)            AS calls,
    round(e.us, 3)                  AS total_us,
    array_to_string(i.aten_ops, ' ') AS aten_ops,
    l.source_lines,
    coalesce(c.n, 0)                AS compiles,
    r.workload,
    i.run_id
FROM spyre_kernel_identities i
JOIN run_workloads r USING (run_id)
LEFT JOIN events e ON e.run_id = i.run_id AND e.name = i.event_name_base
LEFT JOIN lines l ON l.run_id = i.run_id AND l.identity_key = i.identity_key
LEFT JOIN compiles c ON c.run_id = i.run_id AND c.identity_key = i.identity_key
WHERE i.run_id IN (SELECT run_id FROM picked_runs(MAP {'runs': $run}))
ORDER BY total_us DESC NULLS LAST, i.event_name_base, i.run_id, i.identity_key;
