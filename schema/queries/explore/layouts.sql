-- Buffer layouts of one graph: kind, device, dtype, size, stride, offset
-- @internal used by the Run explorer page
-- @param run_id VARCHAR the run
-- @param graph_id VARCHAR the graph
-- @param limit INTEGER default=500 at most this many buffers
SELECT
    l.buffer,
    l.layout_kind,
    l.ir_class,
    l.device,
    l.dtype,
    '[' || array_to_string(l.size, ', ') || ']'    AS size,
    '[' || array_to_string(l.stride, ', ') || ']'  AS stride,
    l."offset",
    l.kernel_name,
    l.details
FROM layouts l
WHERE l.run_id = $run_id AND l.run_key = (SELECT run_key FROM runs WHERE run_id = $run_id) AND l.graph_id = $graph_id
ORDER BY l.buffer, l.layout_kind, l.kernel_name, l.ir_class, l.details
LIMIT $limit;
