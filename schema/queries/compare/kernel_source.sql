-- Compare: a kernel's normalised source text by its hash (for --show-code)
-- @param hash VARCHAR source_hash of the kernel
SELECT source_hash, source FROM kernel_sources WHERE source_hash = $hash;
