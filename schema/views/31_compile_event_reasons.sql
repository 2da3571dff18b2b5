-- Compile events with a one-line headline of their reason, the key the "top reasons" queries group by.
-- Dynamo's reasons are multi-line and their wording drifts across releases: the headline drops the
-- 'Graph Break Reason: ' / 'Reason: ' prefix, skips the generic 'Encountered graph break when
-- attempting to trace ...' / 'Failed to handle graph break gracefully ...' preamble of 2.7+ (the
-- graph-break title follows it), and drops the '<compile id>: ' that starts a recompile reason (the
-- id of the cache entry whose guard failed differs per frame, the failed guard is the reason) and
-- the '  # source line' comment Dynamo appends to a guard (it names a path inside the venv).
CREATE OR REPLACE VIEW compile_event_reasons AS
WITH split AS (
    SELECT
        e.*,
        list_filter(
            string_split(regexp_replace(coalesce(e.reason, ''), '^(Graph Break Reason|Reason): ', ''), chr(10)),
            lambda x: trim(x) <> ''
        ) AS reason_lines
    FROM compile_events e
)
SELECT
    run_id, compile_id, kind, reason, user_file, user_line, source,
    left(regexp_replace(trim(
        CASE WHEN len(reason_lines) > 1
                  AND (reason_lines[1] LIKE 'Encountered graph break when attempting%'
                       OR reason_lines[1] LIKE 'Failed to handle graph break gracefully%')
             THEN reason_lines[2]
             ELSE coalesce(reason_lines[1], '') END
    ), '^!?[0-9-]+(/[0-9-]+)+(_[0-9]+)?: |\s{2,}#.*$', '', 'g'), 200) AS headline
FROM split;
