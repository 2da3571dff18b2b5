-- `record` still holds the record as JSON text, but typed VARCHAR: a JSON column validates every
-- record on insert (0.2 s of a 225 MB TORCH_TRACE ingest), while ->> and -> read VARCHAR alike.
-- (First: DuckDB 1.5 refuses to commit an ALTER TYPE after an UPDATE of the same table.)
ALTER TABLE compilations ALTER record TYPE VARCHAR;
-- compare/runs shows each run's inductor_config. Extracting it from `record` (about 190 KB of
-- JSON a compile, mostly inductor_provenance) read the whole record column: 1.3 s at 10,000 runs.
-- The TORCH_TRACE parser fills it; older warehouses are filled from their records here.
ALTER TABLE compilations ADD COLUMN inductor_config VARCHAR;
UPDATE compilations SET inductor_config = record ->> 'inductor_config';
