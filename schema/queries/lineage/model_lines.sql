-- The model's own view: each line with the kernels it became and their profiled time
-- Every model source line of one run that became kernels (views/70_kernel_lines.sql), with how
-- many kernels and how much profiled time they account for: kernel_us sums the profiler's time of
-- each generated kernel of the line (a kernel fused from several lines counts in each of them;
-- NULL without a profile with kernel events). With `base`, the same for another run (an earlier
-- release, say) and the deltas, head minus base: lines of either run.
-- @param run VARCHAR run id, or a unique prefix of one
-- @param base VARCHAR another run (id or unique prefix) to compare with
-- @param file VARCHAR only files whose path contains this text
WITH sides AS (
    SELECT 'head' AS side, run_id, run_key FROM runs WHERE starts_with(run_id, $run)
    UNION ALL
    SELECT 'base', run_id, run_key FROM runs WHERE $base IS NOT NULL AND starts_with(run_id, $base)
), lines AS (
    -- each side's lines apart: for two runs' keys at once DuckDB reads every row of the row groups
    -- that hold either run and filters them only at the join; for one run's it filters in the scan
    SELECT 'head' AS side, k.* FROM kernel_lines((SELECT list(run_key) FROM sides WHERE side = 'head')) k
    WHERE $file IS NULL OR contains(k.file, $file)
    UNION ALL
    SELECT 'base' AS side, k.* FROM kernel_lines((SELECT list(run_key) FROM sides WHERE side = 'base')) k
    WHERE $file IS NULL OR contains(k.file, $file)
), times AS (
    SELECT t.run_key, t.graph_id, t.name, sum(t.duration_us) AS us
    FROM timings t
    WHERE t.run_key IN (SELECT run_key FROM sides) AND t.kind = 'kernel' AND t.launched_by IS NULL
    GROUP BY ALL
), per_line AS (
    SELECT l.side, l.file, l.line, count(DISTINCT l.kernel_name) AS kernels,
           list(DISTINCT l.kernel_name ORDER BY l.kernel_name) AS kernel_names,
           sum(t.us) AS kernel_us, list(DISTINCT l.graph_id ORDER BY l.graph_id) AS graphs
    FROM (SELECT DISTINCT side, run_key, graph_id, file, line, kernel_name FROM lines) l
    LEFT JOIN times t ON t.run_key = l.run_key AND t.graph_id = l.graph_id AND t.name = l.kernel_name
    GROUP BY ALL
), code AS (
    SELECT o.source_file AS file, o.source_line AS line, min(o.source_code) AS source_code
    FROM ops o JOIN sides USING (run_key, run_id)
    WHERE o.source_file IS NOT NULL
    GROUP BY ALL
)
SELECT
    coalesce(h.file, b.file)                      AS file,
    coalesce(h.line, b.line)                      AS line,
    c.source_code,
    coalesce(h.kernels, 0)                        AS kernels,
    round(h.kernel_us, 2)                         AS kernel_us,
    h.kernel_names,
    b.kernels                                     AS base_kernels,
    round(b.kernel_us, 2)                         AS base_kernel_us,
    CASE WHEN $base IS NOT NULL THEN coalesce(h.kernels, 0) - coalesce(b.kernels, 0) END AS kernels_delta,
    round(h.kernel_us - b.kernel_us, 2)           AS kernel_us_delta,
    b.kernel_names                                AS base_kernel_names,
    coalesce(h.graphs, b.graphs)                  AS graphs
FROM (SELECT * FROM per_line WHERE side = 'head') h
FULL JOIN (SELECT * FROM per_line WHERE side = 'base') b USING (file, line)
LEFT JOIN code c ON c.file = coalesce(h.file, b.file) AND c.line = coalesce(h.line, b.line)
ORDER BY file, line;
