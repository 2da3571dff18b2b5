-- The source of a generated kernel, by the hash of its normalised source
-- @internal used by the Run explorer page
-- Kept in the warehouse, so it outlives the artifact folders.
-- @param source_hash VARCHAR the kernel's source_hash
SELECT source_hash, source
FROM kernel_sources
WHERE source_hash = $source_hash;
