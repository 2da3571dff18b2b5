-- Which kernels did each line of my model become?
-- For one run: every model source line (file:line) with the kernels it became. From the trace's
-- provenance stack traces (innermost user frame of each kernel) when the run has a trace; else from
-- the provenance node mappings joined to the `# File:` comments of the post-grad graph
-- (views/70_kernel_lines.sql).
-- @param run VARCHAR run id, or a unique prefix of one
-- @param file VARCHAR only files whose path contains this text
-- @param line INTEGER only this line
WITH run AS (
    -- joined by run_key too: DuckDB then skips other runs' row groups (zone maps)
    SELECT run_id, run_key FROM runs WHERE starts_with(run_id, $run)
),
lines AS (
    SELECT graph_id, file, line, kernel_name FROM kernel_lines((SELECT list(run_key) FROM run))
),
code AS (
    SELECT o.source_file AS file, o.source_line AS line, min(o.source_code) AS source_code
    FROM ops o JOIN run USING (run_key, run_id)
    WHERE o.source_file IS NOT NULL
    GROUP BY ALL
)
SELECT
    l.file,
    l.line,
    c.source_code,
    count(DISTINCT l.kernel_name)                          AS kernels,
    list(DISTINCT l.kernel_name ORDER BY l.kernel_name)    AS kernel_names,
    list(DISTINCT l.graph_id ORDER BY l.graph_id)          AS graphs
FROM lines l
LEFT JOIN code c USING (file, line)
WHERE ($file IS NULL OR contains(l.file, $file))
  -- a subquery, not `= $line`, as in lineage/line_across_runs: kept out of kernel_lines' ops scan
  AND ($line IS NULL OR l.line IN (SELECT $line))
GROUP BY ALL
ORDER BY l.file, l.line;
