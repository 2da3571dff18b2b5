-- Multi-rank jobs: what each rank did, and where ranks of one job differ (the desyncs tlparse's
-- multi-rank report warns about). A job is the runs with a rank that share `runs.job` (the folder
-- holding the ranks; else the `job` label); it is shown by its `job` label.
-- rank_signatures: one row per (job, rank, kind, key): the rank's value as text.
--   compile_ids      key: compile id (compilation_metrics); value 'compiled'
--   cache            key: compile id and cache; value: its lookups' outcomes in log order
--   collectives      key: 'schedule <compile id>' (inductor_collective_schedule) or 'code <graph id>'
--                    (the output code's collective calls); value: the ops in order
--   graph_execution  key: ''; value: the compile ids in the order their graphs ran
--   tensor_meta      key: compile id; value: md5 of its ops' names and output shapes (op_estimates)
-- Only the rows of runs that are ranks of a job are read (by run key): the signatures of every run
-- of a large warehouse, most of them of one process, would be made and then dropped.
CREATE OR REPLACE VIEW rank_signatures AS
WITH job_runs AS (
    SELECT run_id, run_key, coalesce(job, labels ->> 'job') AS job, rank FROM runs
    WHERE coalesce(job, labels ->> 'job') IS NOT NULL AND rank IS NOT NULL
)
SELECT j.job, j.rank, j.run_id, s.kind, s.key, s.value
FROM job_runs j
JOIN (
    SELECT run_id, 'compile_ids' AS kind, compile_id AS key, 'compiled' AS value
    FROM compilations WHERE record_kind = 'compilation_metrics' AND compile_id IS NOT NULL
                        AND run_key IN (SELECT run_key FROM job_runs) GROUP BY ALL
    UNION ALL
    SELECT run_id, 'cache', coalesce(compile_id, '-') || ' ' || cache,
           string_agg(coalesce(outcome, '?'), ',' ORDER BY line, source, outcome)
    FROM cache_events WHERE run_key IN (SELECT run_key FROM job_runs) GROUP BY ALL
    UNION ALL
    SELECT run_id, 'collectives',
           CASE WHEN source = 'output_code' THEN 'code ' || graph_id ELSE 'schedule ' || coalesce(compile_id, '-') END,
           string_agg(coalesce(op, '?'), ',' ORDER BY line, seq, op)
    FROM collectives WHERE run_key IN (SELECT run_key FROM job_runs) GROUP BY ALL
    UNION ALL
    SELECT run_id, 'graph_execution', '', string_agg(coalesce(compile_id, '?'), ',' ORDER BY seq, compile_id)
    FROM graph_executions WHERE run_key IN (SELECT run_key FROM job_runs) GROUP BY ALL
    UNION ALL
    SELECT run_id, 'tensor_meta', coalesce(compile_id, '-'),
           md5(string_agg(coalesce(name, '') || ':' || coalesce(CAST(outputs AS VARCHAR), ''), '|' ORDER BY line, seq, name, CAST(outputs AS VARCHAR)))
    FROM op_estimates WHERE run_key IN (SELECT run_key FROM job_runs) GROUP BY ALL
) s USING (run_id);

-- rank_divergences: every (job, kind, key) on which the job's ranks do not all agree, one row per
-- rank: its value (NULL: the rank has none, e.g. a compile id it never compiled), how many ranks
-- share that value, and how many ranks the job has.
CREATE OR REPLACE VIEW rank_divergences AS
WITH job_ranks AS (
    SELECT DISTINCT coalesce(job, labels ->> 'job') AS job, rank, run_id FROM runs
    WHERE coalesce(job, labels ->> 'job') IS NOT NULL AND rank IS NOT NULL
),
keys AS (SELECT DISTINCT job, kind, key FROM rank_signatures),
grid AS (
    SELECT k.job, k.kind, k.key, r.rank, r.run_id, s.value
    FROM keys k
    JOIN job_ranks r USING (job)
    LEFT JOIN rank_signatures s
           ON s.job = k.job AND s.kind = k.kind AND s.key = k.key AND s.run_id = r.run_id
),
variants AS (
    SELECT job, kind, key, count(DISTINCT coalesce(value, chr(0))) AS n, count(*) AS ranks
    FROM grid GROUP BY ALL
)
SELECT g.job, g.kind, g.key, g.rank, g.run_id, g.value,
       count(*) OVER (PARTITION BY g.job, g.kind, g.key, g.value) AS ranks_agreeing,
       v.ranks
FROM grid g JOIN variants v USING (job, kind, key)
WHERE v.n > 1;
