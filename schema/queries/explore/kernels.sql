-- The kernels of one graph: category, ATen ops, loads/stores and profiled time
-- @internal used by the Run explorer page
-- Generated kernels first, in definition order, then extern call sites. time_us is the profiler's
-- total for a generated kernel of that name in that graph; for an extern call site, the time of the
-- kernels (cuBLAS, cuDNN, attention) its op launched at that call (the graph's n-th call of the op,
-- views/11_extern_ops.sql). NULL without a profile, or a profile without kernel events (CPU runs).
-- @param run_id VARCHAR the run
-- @param graph_id VARCHAR the graph
-- @param limit INTEGER default=500 at most this many kernels
-- @param offset INTEGER default=0 skip this many kernels (paging)
WITH times AS (
    SELECT name, launched_by, launch_index, duration_us, calls
    FROM timings
    WHERE run_id = $run_id AND run_key = (SELECT run_key FROM runs WHERE run_id = $run_id) AND graph_id = $graph_id AND kind = 'kernel'
), kernel_time AS (
    SELECT name, sum(duration_us) AS us, sum(calls) AS calls FROM times WHERE launched_by IS NULL GROUP BY name
), op_time AS (
    SELECT launched_by, launch_index, sum(duration_us) AS us, sum(calls) AS calls
    FROM times WHERE launched_by IS NOT NULL GROUP BY ALL
), listed AS (
    SELECT k.*,
           CASE WHEN NOT k.generated
                THEN row_number() OVER (PARTITION BY k.generated, extern_op(k.kernel_name) ORDER BY k.site, k.kernel_name, k.line) - 1
           END AS call_index
    FROM kernels k
    WHERE k.run_id = $run_id AND k.run_key = (SELECT run_key FROM runs WHERE run_id = $run_id) AND k.graph_id = $graph_id
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
    round(coalesce(t.us, o.us), 2)        AS time_us,
    coalesce(t.calls, o.calls)            AS calls,
    k.source_hash,
    k.site
FROM listed k
LEFT JOIN kernel_time t ON k.generated AND t.name = k.kernel_name
LEFT JOIN op_time o ON NOT k.generated AND o.launched_by = extern_op(k.kernel_name) AND o.launch_index = k.call_index
)
-- the total by a count, not count(*) OVER () (duckdb/duckdb#22846: see explore/runs)
SELECT f.* EXCLUDE (site), (SELECT count(*) FROM found) AS total
FROM found f
ORDER BY f.generated DESC, f.site NULLS LAST, f.kernel_name, f.source_hash, f.time_us
LIMIT $limit OFFSET $offset;
