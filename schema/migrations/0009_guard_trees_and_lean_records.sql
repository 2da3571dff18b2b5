-- Guard trees are kept once by their md5 in guard_trees (as kernel sources are in kernel_sources):
-- a model's tree is the same night after night, and its text (up to 1.7 MB) held on every run's
-- guards row was 40% of a warehouse's bytes. guards.tree_hash names the tree.
CREATE TABLE guard_trees (
    tree_hash  VARCHAR PRIMARY KEY,
    text       VARCHAR NOT NULL
);
INSERT INTO guard_trees SELECT md5(text), any_value(text) FROM guards WHERE text IS NOT NULL GROUP BY md5(text);
-- a new table, not ADD/UPDATE/DROP COLUMN: DuckDB refuses a column drop after an update in one transaction
CREATE TABLE guards_by_hash (
    run_id       VARCHAR NOT NULL,
    compile_id   VARCHAR,
    guard_count  BIGINT,
    tree_hash    VARCHAR
);
INSERT INTO guards_by_hash SELECT run_id, compile_id, guard_count, md5(text) FROM guards;
DROP TABLE guards;
ALTER TABLE guards_by_hash RENAME TO guards;
-- compilations.record is the compilation_metrics record less what the warehouse keeps elsewhere:
-- inductor_config is compilations.inductor_config (migration 0004), and inductor_provenance is the
-- run's inductor_provenance_tracking_kernel_stack_traces artifacts again, read into lineage
-- (source 'torch_trace': a row per kernel and user frame); together 90% of the record's bytes.
UPDATE compilations SET record = json_merge_patch(record, '{"inductor_config": null, "inductor_provenance": null}')::VARCHAR
WHERE record LIKE '%"inductor_config"%' OR record LIKE '%"inductor_provenance"%';
