-- Run labels as (run_id, key, value) rows, scalar values only, and the label keys worth offering as
-- filters or compare sides: 2 to 12 short values across the warehouse (variant, mode, dtype...);
-- per-run values such as wall times or commit hashes would make useless choices.
CREATE OR REPLACE VIEW run_label_values AS
-- kept at ingest as run_tallies of kind 'label' (key=value; a key holds no '=')
SELECT run_id, split_part(name, '=', 1) AS k, substr(name, strpos(name, '=') + 1) AS v
FROM run_tallies
WHERE kind = 'label';

-- (key, value, runs): the label values of the warehouse with how many runs have each. A run has one
-- value a key, so its rows are counted, not its distinct run ids: grouped by the stored key=value
-- text first, this reads the label rows once (5 ms at 100,000 runs, against 130 ms for a count of
-- distinct run ids a key).
-- Values are spelled as workload_value (views/12_workloads.sql) spells them: mode=inference and
-- mode=infer are one choice.
CREATE OR REPLACE VIEW label_value_runs AS
SELECT k, v, sum(runs)::BIGINT AS runs
FROM (SELECT split_part(name, '=', 1) AS k, workload_value(k, substr(name, strpos(name, '=') + 1)) AS v, runs
      FROM (SELECT name, sum(n)::BIGINT AS runs FROM run_tallies WHERE kind = 'label' GROUP BY name))
GROUP BY k, v;

-- What a capture or the zoo records about a run beside its labels: the command, its exit, the host,
-- the interpreter's and libraries' versions, timings. Facts of the run, never workload labels,
-- filters or compare sides (the compiler version is runs.compiler_version; the device, a label).
CREATE OR REPLACE MACRO run_fact_keys() AS
    ['caches', 'command', 'cuda', 'cuda_version', 'device_name', 'error', 'exit_code', 'git', 'host', 'hostname', 'job_exit_code',
     'ok', 'python', 'python_version', 'seconds_total', 'started_at', 'timed_out', 'torch', 'torch_git',
     'torch_version', 'triton', 'triton_version', 'unfinished_compile', 'wall_s'];

-- The label keys worth offering as filters and compare sides: 2 to 12 values across the warehouse,
-- none longer than 32 characters, and no run fact (run_fact_keys).
CREATE OR REPLACE VIEW choice_label_keys AS
SELECT k
FROM label_value_runs
WHERE NOT list_contains(run_fact_keys(), k)
GROUP BY k
HAVING count(*) BETWEEN 2 AND 12 AND max(length(v)) <= 32;
