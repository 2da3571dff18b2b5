-- version_key('2.13.0+cpu') = [2, 13, 0]: sorts compiler versions as releases, not as text
-- ('2.6.0' before '2.13.0'). Only the leading dotted numbers count; a '.devYYYYMMDD' nightly or a
-- '+cu124' build sorts with its release, so queries break the tie with the full string or a date.
CREATE OR REPLACE MACRO version_key(v) AS
    list_transform(string_split(regexp_extract(coalesce(v, ''), '^[0-9]+(\.[0-9]+)*'), '.'),
                   lambda x: TRY_CAST(x AS INTEGER));
-- version_matches(v, selector): a selector names a release or a release family on a part boundary:
-- '2.13' matches 2.13.0+cpu and 2.13.1, '2.13.0' matches 2.13.0+cpu and 2.13.0a0+git..., and
-- '2.1' never matches 2.13.0 (the character after the selector must not be a digit).
CREATE OR REPLACE MACRO version_matches(v, selector) AS
    starts_with(v, selector)
    AND (length(v) = length(selector) OR NOT regexp_matches(substr(v, length(selector) + 1, 1), '[0-9]'));
-- "Latest" of a set of runs: the newest compiler release, then build, then start time, then the
-- greatest run id, so that runs alike in all three pick one whatever order they were written in
-- (arg_max(run_id, (release_order(compiler_version, started_at), run_id))). Releases sort as
-- releases (version_key); runs without a version or a start time come first.
CREATE OR REPLACE MACRO release_order(version, started_at) AS {
    'release': list_transform(version_key(version), lambda x: coalesce(x, -1)),
    'build': coalesce(version, ''),
    'started': coalesce(started_at, TIMESTAMP '0001-01-01')};
