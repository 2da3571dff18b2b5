-- version_key('2.13.0+cpu') = [2, 13, 0]: sorts compiler versions as releases, not as text
-- ('2.6.0' before '2.13.0'). Only the leading dotted numbers count; a '.devYYYYMMDD' nightly or a
-- '+cu124' build sorts with its release, so queries break the tie with the full string or a date.
CREATE OR REPLACE MACRO version_key(v) AS
    list_transform(string_split(regexp_extract(coalesce(v, ''), '^[0-9]+(\.[0-9]+)*'), '.'),
                   lambda x: TRY_CAST(x AS INTEGER));
