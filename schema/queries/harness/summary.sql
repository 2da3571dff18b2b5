-- HUD's compiler dashboard per suite and release, over the suite's workloads: pass rate, geomean speedup, compile latency
-- One row per suite, point (a compiler version, or a label's value with key=nightly), mode, dtype,
-- backend, device and variant (label): an aggregate over its workloads (a model each: the
-- harness_summary macro), as HUD's suite numbers are; `workloads` says how many. A workload passes
-- when its accuracy is pass, pass_due_to_skip or eager_variation and its speedup is not 0
-- (pass_due_to_skip passes whatever its speedup); the geomean speedup, mean compilation latency and
-- mean compression ratio are over the workloads whose accuracy passes (values of 0 left out). A suite
-- that gained or lost models between two points changes these without any compiler change:
-- harness/models compares one workload. Results of no known release (a CI job's CSVs alone) are a
-- point of their own, named by their run's labels (`ci=timm-cpu-2.13`; harness_point): in_series
-- false, after the releases; with a label as key, a run without that label is on no point.
-- Two result sets are never one point.
-- @param key VARCHAR default=compiler what a point is: compiler (version) or a label key
-- @param suite VARCHAR only this suite (timm_models, huggingface, torchbench)
SELECT suite, point, harness_point_placed($key, compiler_version) AS in_series,
       mode, dtype, backend, device, variant, workloads, passed_workloads,
       round(pass_rate, 4) AS pass_rate, round(geomean_speedup, 4) AS geomean_speedup,
       round(compilation_latency, 3) AS compilation_latency_s, round(compression_ratio, 4) AS compression_ratio,
       round(dynamo_peak_mem, 3) AS dynamo_peak_mem_gb, round(geomean_speedup_all, 4) AS geomean_speedup_all,
       workloads_without_accuracy, workloads_without_performance
FROM harness_summary($key, NULL)
WHERE ($suite IS NULL OR suite = $suite)
ORDER BY suite, mode, dtype, backend, device, variant, in_series DESC, version_key(point), point;
