-- A run with a graph of unknown node counts (its IR never came, or a cache hit wrote none) has unknown
-- pre and post fusion node counts and fusion rate, not the sums of its other graphs
-- (views/15_run_rollups_of.sql): the runs with such a graph beside a known one have their rollups made
-- again by the migration's caller.
DELETE FROM run_rollups WHERE run_id IN (
    SELECT run_id FROM graphs
    GROUP BY run_id
    HAVING count(*) FILTER (WHERE pre_fusion_nodes IS NULL OR post_fusion_nodes IS NULL) > 0
       AND count(*) FILTER (WHERE pre_fusion_nodes IS NOT NULL AND post_fusion_nodes IS NOT NULL) > 0);
