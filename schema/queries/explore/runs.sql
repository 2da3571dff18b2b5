-- Runs to explore, newest first, one page at a time
-- @internal used by the Run explorer page
-- `search` matches the model, compiler version, run id or folder (case-insensitive substring).
-- @param compilers VARCHAR only these compiler versions (comma-separated)
-- @param models VARCHAR only these models (comma-separated)
-- @param devices VARCHAR only these devices (comma-separated)
-- @param labels VARCHAR only runs with these labels, k=v comma-separated (one key: any of its values; several keys: all)
-- @param search VARCHAR only runs whose model, version, run id or folder contains this
-- @param limit INTEGER default=50 at most this many runs
-- @param offset INTEGER default=0 skip this many runs (paging)
WITH found AS (
    -- the runs' own columns alone: a page of them is picked before their counts are read
    SELECT run_id, model, started_at, source_path
    FROM picked_runs(MAP {'compilers': $compilers, 'models': $models, 'devices': $devices, 'labels': $labels}) p
    WHERE $search IS NULL
       OR concat_ws(' ', p.model, p.compiler_version, p.run_id, p.source_path) ILIKE '%' || $search || '%'
), page AS (
    SELECT * FROM found
    ORDER BY started_at DESC NULLS LAST, model, run_id
    LIMIT $limit OFFSET $offset
)
-- the total by a count, not count(*) OVER (): DuckDB 1.5 can abort on that window under concurrent
-- queries (duckdb/duckdb#22846) and invalidate the database for the whole process
SELECT m.* EXCLUDE (failures, started_at) REPLACE (round(m.fusion_rate, 4) AS fusion_rate),
       p.started_at, p.source_path, (SELECT count(*) FROM found) AS total
FROM run_listing m
JOIN page p USING (run_id)
ORDER BY p.started_at DESC NULLS LAST, p.model, p.run_id;
