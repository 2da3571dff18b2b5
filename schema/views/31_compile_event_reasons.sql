-- Compile events with a one-line headline of their reason and the cause the "top reasons" queries
-- group by. Dynamo's reasons are multi-line and their wording drifts across releases: the headline
-- drops the 'Graph Break Reason: ' / 'Reason: ' prefix, skips the generic 'Encountered graph break
-- when attempting to trace ...' / 'Failed to handle graph break gracefully ...' preamble of 2.7+ (the
-- graph-break title follows it), and drops the '<compile id>: ' that starts a recompile reason (the
-- id of the cache entry whose guard failed differs per frame, the failed guard is the reason) and
-- the '  # source line' comment Dynamo appends to a guard (it names a path inside the venv).
--   break_id    Dynamo's own graph-break registry id (`gb0088`, in the message's link since 2.8)
--   normalised  the headline with what differs from run to run for one cause replaced: paths by
--               their last part, object ids (6+ digits) by <id>, addresses by 0x…, compared string
--               literals by <str>, other numbers (not subscripts) by N, and a local's source
--               `L['x']` (2.6) by its name as later releases write it
--   cause       what groups events across releases: compile_events.cause_id (a break's or failure's
--               registry id, pre-registry messages mapped onto it; a recompile's guard kind), else the
--               registry id of the message's link, else `normalised`; an `unknown_*` row's headline
--               whole: the warehouse's own sentence of why a count is unknown, whose numbers are the
--               release and the count it is about, not what differs from run to run
--   cause_title the registry's title of that id (its gb_type), the guard kind, else the headline
-- The raw text stays in `reason` (and a recompile's failed guards in `details`). The headline is one
-- match at the start of the reason, not a split of all its lines: reasons carry whole tracebacks
-- (860,000 events: 1.7 s instead of 7).
CREATE OR REPLACE VIEW compile_event_reasons AS
WITH headed AS (
    SELECT
        run_id, compile_id, kind, reason, user_file, user_line, source, details, fallback,
        origin, cause_id, cause_title, run_key,
        left(regexp_replace(
            regexp_extract(coalesce(reason, ''),
                           '^\s*(?:(?:Graph Break Reason|Reason): )?\s*(?:(?:Encountered graph break when attempting|Failed to handle graph break gracefully)[^\n]*\n\s*)?([^\n]*[^\s])', 1),
            '^!?[0-9-]+(/[0-9-]+)+(_[0-9]+)?: |\s{2,}#.*$', '', 'g'), 200) AS headline,
        nullif(regexp_extract(coalesce(reason, ''), '/gb/(gb[0-9]+)\.html', 1), '') AS break_id
    FROM compile_events
), normalised AS (
    SELECT *,
        regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(headline,
            'L\[''([^'']+)''\]', '\1', 'g'),
            '(/[^/\s''"]+)+/([^/\s''"]+)', '…/\2', 'g'),
            '0x[0-9a-fA-F]+', '0x…', 'g'),
            '\b[0-9]{6,}\b', '<id>', 'g'),
            '(==|!=) *''[^'']*''', '\1 <str>', 'g'),
            '(^|[^\w.\[<-])-?[0-9]+(\.[0-9]+)?\b', '\1N', 'g') AS normalised
    FROM headed
)
SELECT * EXCLUDE (cause_id, cause_title),
       coalesce(cause_id, break_id, CASE WHEN starts_with(kind, 'unknown_') THEN headline ELSE normalised END) AS cause,
       coalesce(cause_title, headline) AS cause_title
FROM normalised;
