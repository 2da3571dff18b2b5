-- Compile events per kind: how many graph breaks, recompiles, restarts and failures, in how many runs
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
WITH picked AS (
    SELECT * FROM picked_runs($compilers, $models, $devices, $labels)
)
SELECT e.kind, count(*) AS events, count(DISTINCT e.run_id) AS runs, count(DISTINCT p.model) AS models
FROM compile_events e
JOIN picked p USING (run_id)
GROUP BY ALL
ORDER BY events DESC;
