-- One model line's kernels in every run: what did this line become in each release?
-- For a model source line (a file, by any part of its path, and a line number), the kernels it
-- became in each run that has it (views/70_kernel_lines.sql), with each kernel's category,
-- signature (the name without its per-graph counter), normalised source hash and profiled time.
-- `iwh compare --lineage FILE:LINE` pairs two runs' rows as the kernel diff pairs kernels.
-- @param file VARCHAR the model file: any part of its path
-- @param line INTEGER the line
-- @param model VARCHAR only runs of this model
-- @param runs VARCHAR only these runs (ids or unique prefixes, comma-separated)
WITH picked AS (
    SELECT r.run_id, r.run_key, r.model, r.compiler_version, r.started_at
    FROM runs r
    WHERE r.run_id IN (SELECT run_id FROM picked_runs(MAP {'models': $model, 'runs': $runs}))
), hits AS (
    SELECT DISTINCT k.run_id, k.run_key, k.graph_id, k.file, k.line, k.kernel_name
    FROM kernel_lines((SELECT list(run_key) FROM picked)) k
    -- the line as a subquery, not `= $line`: a constant equality is pushed into kernel_lines' ops scan,
    -- whose small estimate then makes DuckDB build the ops join from a scan of every run's ops
    WHERE contains(k.file, $file) AND k.line IN (SELECT $line)
), times AS (
    SELECT t.run_key, t.graph_id, t.name, sum(t.duration_us) AS us
    FROM timings t
    WHERE t.run_key IN (SELECT run_key FROM hits) AND t.kind = 'kernel' AND t.launched_by IS NULL
    GROUP BY ALL
)
SELECT
    p.run_id, p.model, p.compiler_version, w.workload, h.file, h.line, h.graph_id, g.phase, h.kernel_name,
    k.generated, k.category, k.signature, k.source_hash, round(t.us, 2) AS kernel_us
FROM hits h
JOIN picked p USING (run_key, run_id)
LEFT JOIN run_workloads w ON w.run_id = h.run_id
LEFT JOIN graphs g ON g.run_key = h.run_key AND g.run_id = h.run_id AND g.graph_id = h.graph_id
LEFT JOIN kernels k ON k.run_key = h.run_key AND k.run_id = h.run_id AND k.graph_id = h.graph_id
                   AND k.kernel_name = h.kernel_name
LEFT JOIN times t ON t.run_key = h.run_key AND t.graph_id = h.graph_id AND t.name = h.kernel_name
ORDER BY p.model, p.compiler_version, p.started_at, h.run_id, h.file, h.line, g.phase, h.graph_id, h.kernel_name, k.site,
         k.line;
