-- Compare: HUD's suite numbers of each side, over the harness rows of the runs compared
-- @internal used by `iwh compare` and the Compare page
-- For each side, HUD's compiler dashboard numbers (views/61_harness.sql: harness_summary_of over the
-- rows that measured the side's runs or that they hold, one point a side, each workload's samples by
-- its metric's one rule): workloads, pass rate, geomean speedup, mean compilation latency and
-- compression ratio, per suite, mode, dtype, backend, device and variant.
-- @param base_runs VARCHAR the base side's run ids, comma-separated
-- @param head_runs VARCHAR the head side's run ids, comma-separated
-- @param model VARCHAR only this model's rows (`iwh compare --model`)
SELECT 'base' AS side, * EXCLUDE (point)
FROM harness_summary_of(NULL, string_split($base_runs, ','), NULL, $model)
UNION ALL
SELECT 'head' AS side, * EXCLUDE (point)
FROM harness_summary_of(NULL, string_split($head_runs, ','), NULL, $model)
ORDER BY suite, mode, dtype, backend, device, variant, side;
