-- Whether the run's own files say Inductor's caches were off or on ('off' | 'on'; NULL where none
-- says), and which file and setting said it (ingest/parsers/cache_settings.py): the manifest's
-- `caches`, compilation_metrics' inductor_config or compiler_config, fx_graph_runnable's env and
-- config lines, a Triton kernel's inductor_meta. torch leaves force_disable_caches out of
-- compilation_metrics' inductor_config from the release that made it torch.compiler.config's, so the
-- stored config alone no longer tells a run made with TORCHINDUCTOR_FORCE_DISABLE_CACHES=1.
ALTER TABLE runs ADD COLUMN caches_said VARCHAR;
ALTER TABLE runs ADD COLUMN caches_said_by VARCHAR;
-- Runs written before: what their stored manifest, Inductor config and compilation_metrics records
-- (compiler_config) say; their repro scripts and kernels tell more only when they are ingested again.
UPDATE runs SET caches_said = lower(labels ->> 'caches'), caches_said_by = 'manifest: caches=' || lower(labels ->> 'caches')
WHERE lower(labels ->> 'caches') IN ('off', 'on');
UPDATE runs SET caches_said = 'off', caches_said_by = 'trace compilation_metrics inductor_config'
WHERE coalesce(caches_said, '') <> 'off' AND run_id IN (
    SELECT r.run_id FROM run_rollups r JOIN inductor_configs ic ON ic.config_hash = r.inductor_config_hash
    WHERE json_extract_string(ic.text, '$.force_disable_caches') = 'true'
       OR json_extract_string(ic.text, '$.fx_graph_cache') = 'false');
UPDATE runs SET caches_said = 'off', caches_said_by = 'trace compilation_metrics compiler_config'
WHERE coalesce(caches_said, '') <> 'off' AND run_id IN (
    SELECT run_id FROM compilations
    WHERE json_extract_string(json_extract_string(record, '$.compiler_config'), '$.force_disable_caches') = 'true');
