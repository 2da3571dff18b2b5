-- A TORCH_TRACE record no release the catalog covers writes (a new release's new kind or artifact) is
-- kept whole: one trace_records row a record (n = 1) with its line, compile id, metadata and payload,
-- so that its content can be read once the log is gone. Known records stay counted by kind and name,
-- these columns NULL. Runs already written keep their counts until they are ingested again.
ALTER TABLE trace_records ADD COLUMN line BIGINT;
ALTER TABLE trace_records ADD COLUMN compile_id VARCHAR;
ALTER TABLE trace_records ADD COLUMN metadata JSON;
ALTER TABLE trace_records ADD COLUMN payload VARCHAR;
ALTER TABLE trace_records ADD COLUMN has_payload VARCHAR;
