-- Which text of the post-grad graph an op row was read from: 'readable' (fx_graph_readable.py,
-- what Inductor received) or 'transformed' (after Inductor's FX passes: fx_graph_transformed.py,
-- and the trace's inductor_post_grad_graph payload, which is the same text).
ALTER TABLE ops ADD COLUMN stage VARCHAR;
