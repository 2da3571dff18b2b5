-- The kernels of one graph: category, ATen ops, loads/stores and profiled time
-- Generated kernels first, in definition order, then extern call sites. time_us is the profiler's
-- total for a kernel of that name in that graph (NULL without a profile).
-- @param run_id VARCHAR the run
-- @param graph_id VARCHAR the graph
-- @param limit INTEGER default=500 at most this many kernels
-- @param offset INTEGER default=0 skip this many kernels (paging)
WITH kernel_time AS (
    SELECT name, sum(duration_us) AS us, sum(calls) AS calls
    FROM timings
    WHERE run_id = $run_id AND run_key = (SELECT run_key FROM runs WHERE run_id = $run_id) AND graph_id = $graph_id AND kind = 'kernel'
    GROUP BY name
), found AS (
SELECT
    k.kernel_name,
    k.generated,
    k.category,
    k.backend,
    array_to_string(k.aten_ops, ' ')      AS aten_ops,
    len(k.source_nodes)                   AS source_nodes,
    k.num_load,
    k.num_store,
    k.num_reduction,
    k.size_hints,
    round(t.us, 2)                        AS time_us,
    t.calls,
    k.source_hash,
    k.site
FROM kernels k
LEFT JOIN kernel_time t ON t.name = k.kernel_name
WHERE k.run_id = $run_id AND k.run_key = (SELECT run_key FROM runs WHERE run_id = $run_id) AND k.graph_id = $graph_id
)
-- the total by a count, not count(*) OVER () (duckdb/duckdb#22846: see explore/runs)
SELECT f.* EXCLUDE (site), (SELECT count(*) FROM found) AS total
FROM found f
ORDER BY f.generated DESC, f.site NULLS LAST, f.kernel_name
LIMIT $limit OFFSET $offset;
