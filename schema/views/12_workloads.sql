-- The workload a run measured, the one identity every grouping, delta, trend and "latest" uses:
-- the model plus the workload labels (mode, dtype, variant, batch), the run's device and, for a rank
-- of a multi-rank job, its rank: the ranks of a job are runs of their own that may compile different
-- graphs (a rank that skips a frame, collectives only some issue), so rank 1 compares with rank 1,
-- never with the job's other ranks. A run of one process has no rank and no rank part. Other labels
-- (command lines, hosts, commits, nightly dates, the `job` name) say how a run was made, not what it
-- measured. workload_key(model, device, rank, labels, keys) spells it `mlp [batch=8 device=cpu
-- dtype=fp32 mode=infer variant=default]` (the keys a run has, sorted; device and rank are the run's
-- columns, else its labels); `iwh compare --pair-on` names other keys.
CREATE OR REPLACE MACRO workload_labels() AS ['batch', 'device', 'dtype', 'mode', 'rank', 'variant'];

CREATE OR REPLACE MACRO workload_key(model, device, rank, labels, keys) AS
    coalesce(model, '(no model)') || coalesce(' [' || nullif(array_to_string(list_filter(
        list_transform(list_sort(list_filter(keys, lambda k: coalesce(k, '') <> '')),
                       lambda k: k || '=' || coalesce(CASE WHEN k = 'device' THEN device
                                                           WHEN k = 'rank' THEN CAST(rank AS VARCHAR) END,
                                                      labels ->> k)),
        lambda kv: kv IS NOT NULL), ' '), '') || ']', '');

-- a run's workload is kept in its rollup (run_rollups_of), made with the run
CREATE OR REPLACE VIEW run_workloads AS
SELECT r.run_id, r.model, r.device, r.rank, r.compiler_version, r.started_at, r.labels, u.workload
FROM runs r
LEFT JOIN run_rollups u USING (run_id);
