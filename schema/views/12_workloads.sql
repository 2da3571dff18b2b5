-- The workload a run measured, the one identity every grouping, delta, trend and "latest" uses:
-- the model plus the workload labels (mode, dtype, variant, batch, and harness: the benchmark
-- harness's performance or accuracy run, which differ in batch size and fallback_random; the
-- ingest labels a harness process by the CSVs beside it, ingest/parsers/harness.run_mode), the run's device and, for a rank
-- of a multi-rank job, its rank: the ranks of a job are runs of their own that may compile different
-- graphs (a rank that skips a frame, collectives only some issue), so rank 1 compares with rank 1,
-- never with the job's other ranks. A run of one process has no rank and no rank part. Other labels
-- (command lines, hosts, commits, nightly dates, the `job` name) say how a run was made, not what it
-- measured. workload_key(model, device, rank, labels, keys) spells it `mlp [batch=8 device=cpu
-- dtype=fp32 mode=infer variant=default]` (the keys a run has, sorted; device and rank are the run's
-- columns, else its labels; values as workload_value spells them); `iwh compare --pair-on` names
-- other keys.
CREATE OR REPLACE MACRO workload_labels() AS ['batch', 'device', 'dtype', 'harness', 'mode', 'rank', 'variant'];

-- workload_value(key, value): a workload label's value in its one spelling, so that two tools'
-- words for one thing make one workload. PyTorch's benchmark harness says mode inference/training
-- and dtype float32/float16/bfloat16 (its flags, CSV file names and JSON records; captures labelled
-- with them); zoo/ and the warehouse say infer/train and fp32/fp16/bf16, which every workload key
-- uses. Any other value is kept as written. Labels are stored as written; keys, selectors and
-- filter choices read them through this.
CREATE OR REPLACE MACRO workload_value(k, v) AS
    CASE WHEN k = 'mode' THEN CASE lower(v) WHEN 'inference' THEN 'infer' WHEN 'training' THEN 'train' ELSE v END
         WHEN k = 'dtype' THEN CASE lower(v) WHEN 'float32' THEN 'fp32' WHEN 'float16' THEN 'fp16'
                                             WHEN 'bfloat16' THEN 'bf16' ELSE v END
         ELSE v END;

CREATE OR REPLACE MACRO workload_key(model, device, rank, labels, keys) AS
    coalesce(model, '(no model)') || coalesce(' [' || nullif(array_to_string(list_filter(
        list_transform(list_sort(list_filter(keys, lambda k: coalesce(k, '') <> '')),
                       lambda k: k || '=' || workload_value(k, coalesce(CASE WHEN k = 'device' THEN device
                                                                             WHEN k = 'rank' THEN CAST(rank AS VARCHAR) END,
                                                                        labels ->> k))),
        lambda kv: kv IS NOT NULL), ' '), '') || ']', '');

-- a run's workload is kept in its rollup (run_rollups_of), made with the run
CREATE OR REPLACE VIEW run_workloads AS
SELECT r.run_id, r.model, r.device, r.rank, r.compiler_version, r.started_at, r.labels, u.workload
FROM runs r
LEFT JOIN run_rollups u ON u.run_key = r.run_key;

-- harness_only(kind): an aggregate over a run's artifact kinds: whether the run holds a benchmark
-- harness's results (its CSVs and JSON records; kind harness) and no file a compile wrote, only a
-- manifest or files the warehouse does not read. harness_holders and run_rollups_of both ask it.
CREATE OR REPLACE MACRO harness_only(kind) AS
    bool_or(kind = 'harness') AND bool_and(kind IN ('harness', 'manifest', 'other'));

-- harness_holders: runs that hold a benchmark harness's results and no file a compile wrote
-- (harness_only): a harness job's CSVs held by a run of their own, CI's expected CSVs. Such a run measured no compile, so it is no workload to pair:
-- `iwh compare` and `iwh changes` leave it out, harness/* read its rows.
CREATE OR REPLACE VIEW harness_holders AS
SELECT run_id
FROM artifacts
WHERE run_id IN (SELECT run_id FROM artifacts WHERE kind = 'harness')
GROUP BY run_id
HAVING harness_only(kind);

-- feeds_kernels(kind): whether an artifact of `kind` is a file Inductor's kernels are read from: the
-- kinds that feed the kernels table in ingest/sources.py (a debug tree's output code, a TORCH_TRACE
-- log, a Spyre kernel folder). kernels_unseen and run_rollups_of both ask it.
CREATE OR REPLACE MACRO feeds_kernels(kind) AS kind IN ('output_code', 'torch_trace', 'spyre');

-- kernels_unseen: runs that hold no file Inductor's kernels are read from (feeds_kernels) and have
-- no graph: harness_holders, a TORCH_LOGS capture or a profile alone. Whatever
-- they compiled, the warehouse cannot see it: their graph, kernel and extern-call counts are
-- unknown, not 0: NULL in their rollups (views/15_run_rollups_of.sql), run_metrics and the run listings.
CREATE OR REPLACE VIEW kernels_unseen AS
SELECT run_id
FROM runs
WHERE run_id NOT IN (SELECT run_id FROM artifacts WHERE feeds_kernels(kind))
  AND run_id NOT IN (SELECT run_id FROM graphs);
