-- Compare: Inductor config texts (JSON) by the hash compare/runs gives for each run
-- @internal used by `iwh compare` and the Compare page
-- @param hashes VARCHAR comma-separated config hashes
SELECT config_hash, text
FROM inductor_configs
WHERE list_contains(string_split($hashes, ','), config_hash)
ORDER BY config_hash;
