-- run_unfinished(labels): why a run's process did not finish, from what a capture records of it in
-- the run's labels (manifest.json's `timed_out`, an `exit_code` of a timeout, 124, or of a signal,
-- 128 + N or negative: a rank's own, from torchrun's failure summary, where it printed one) or from
-- its trace (`unfinished_compile`: a compile that began and was never reported, which only a process
-- that died mid-compile leaves), or NULL. A process that raised ended on its own: its counts are a sample.
-- The one rule: the rollups (a run killed before any code has no kernel count) and `iwh compare`
-- (compare/runs' unfinished: no sample of any metric, a head that did not finish fails the gate) read it.
CREATE OR REPLACE MACRO run_unfinished(labels) AS
    CASE WHEN lower(labels ->> 'timed_out') = 'true'
              THEN 'timed out' || coalesce(' (exit ' || TRY_CAST(labels ->> 'exit_code' AS BIGINT) || ')', '')
         WHEN TRY_CAST(labels ->> 'exit_code' AS BIGINT) < 0 OR TRY_CAST(labels ->> 'exit_code' AS BIGINT) >= 124
              THEN 'exit ' || TRY_CAST(labels ->> 'exit_code' AS BIGINT)
         WHEN (labels ->> 'unfinished_compile') IS NOT NULL
              THEN 'compile ' || (labels ->> 'unfinished_compile') || ' never finished' END;
