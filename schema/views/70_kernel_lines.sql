-- The model source lines each kernel of the runs `keys` (run_key values) came from, one row per
-- (run, graph, file, line, kernel): the innermost user frame of the kernel's stack traces (the
-- trace's provenance stack traces, AOTInductor's kernel_information.json, torch-spyre's sidecar)
-- where a run has them; else the `# File:` line of each post-grad node the provenance node
-- mappings link the kernel to (ops.source_file / source_line). The one definition of "which
-- kernels did this line become" for lineage/source_line_kernels, model_lines and line_across_runs.
CREATE OR REPLACE MACRO kernel_lines(keys) AS TABLE
    WITH stacks AS (
        SELECT l.run_id, l.run_key, l.graph_id, l.user_file AS file, l.user_line AS line, l.kernel_name
        FROM lineage l
        WHERE l.run_key IN (SELECT unnest(keys))
          AND l.source IN ('torch_trace', 'kernel_information', 'spyre_provenance')
          AND l.user_file IS NOT NULL AND l.kernel_name IS NOT NULL
    ), nodes AS (
        SELECT l.run_id, l.run_key, l.graph_id, o.source_file AS file, o.source_line AS line, l.kernel_name
        FROM lineage l
        JOIN ops o ON o.run_key = l.run_key AND o.run_id = l.run_id AND o.graph_id = l.graph_id
                  AND o.name = l.post_grad_node
        WHERE l.run_key IN (SELECT unnest(keys)) AND l.source = 'provenance'
          AND l.kernel_name IS NOT NULL AND o.source_file IS NOT NULL
          AND l.run_key NOT IN (SELECT run_key FROM stacks)
    )
    SELECT * FROM stacks UNION SELECT * FROM nodes;
