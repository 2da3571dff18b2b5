-- A run with a graph loaded from the FX graph cache whose code no file logged (2.3 and 2.4 hits) has an
-- unknown kernel count, not the sum of its other graphs' (views/15_run_rollups_of.sql): the runs with
-- such a graph have their rollups made again by the migration's caller.
DELETE FROM run_rollups WHERE run_id IN (
    SELECT DISTINCT run_id FROM graphs
    WHERE cache_state = 'hit' AND (kernel_count IS NULL OR extern_kernel_count IS NULL));
