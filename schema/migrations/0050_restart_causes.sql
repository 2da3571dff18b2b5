-- A restart's reason is the message of the break that restarted the frame's analysis, so it takes
-- that break's registry id as graph breaks and failures do (ingest/parsers/compile_causes.py). Rows
-- written before get the id of the registry link in their message (2.8+); ingest a run again for the
-- pre-registry messages the ingest maps.
UPDATE compile_events SET cause_id = nullif(regexp_extract(coalesce(reason, ''), '/gb/(gb[0-9]+)\.html', 1), '')
WHERE kind = 'restart' AND cause_id IS NULL;
