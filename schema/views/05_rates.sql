-- The rates more than one view or query computes, each defined once here.
-- fusion_rate(pre, post) = 1 - post_fusion_nodes / pre_fusion_nodes: the share of pre-fusion
-- scheduler nodes that fusion merged away (0 = nothing fused; 0.75 = four pre-fusion nodes per
-- post-fusion node). NULL when either count is unknown or there were no pre-fusion nodes. Of a
-- group of graphs: fusion_rate(sum(pre), sum(post)).
CREATE OR REPLACE MACRO fusion_rate(pre_fusion_nodes, post_fusion_nodes) AS
    CASE WHEN pre_fusion_nodes > 0 AND post_fusion_nodes IS NOT NULL
         THEN 1.0 - post_fusion_nodes::DOUBLE / pre_fusion_nodes END;
-- hit_rate(hits, lookups): the share of a cache's lookups that hit; NULL without a lookup.
CREATE OR REPLACE MACRO hit_rate(hits, lookups) AS
    CASE WHEN lookups > 0 THEN hits::DOUBLE / lookups END;
