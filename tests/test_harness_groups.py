"""Harness output nobody here produced, grouped as the harness meant it: real CSVs committed in public
repositories (tests/fixtures/harness/real/, tests/fixtures/SOURCES.md) of the three naming
generations (the harness's own `speedup_<backend>.csv` / `accuracy_<backend>.csv` / `<backend>.csv`,
CI's `<backend>_<suite>_<dtype>_<mode>_<device>_<kind>.csv`, CI's expected values), each group with
the backend its file names; eager and aot_eager apart from inductor; damaged files and rows errors,
never values. Checked against the files read here with Python's csv module."""

from __future__ import annotations

import csv
import math
import shutil
from pathlib import Path

import pytest

from inductor_warehouse.ingest.parsers.harness import parse_harness_csv
from inductor_warehouse.ingest.parsers.harness_names import file_fields, folder_fields, unread_words

HERE = Path(__file__).parent / "fixtures" / "harness"
REAL = HERE / "real"
PASSING = {"pass", "pass_due_to_skip", "eager_variation"}

# (file, kind by header, suite, backend, mode, device): what each real file's name says
NAMED = [
    ("eellison/inductor.csv", "performance", None, "inductor", None, "cuda"),
    ("eellison/inductor_compilation_metrics.csv", "compile_times", None, "inductor", None, "cuda"),
    ("eellison/speedup_aot_eager.csv", "performance", None, "aot_eager", None, "cuda"),
    ("eellison/speedup_aot_eager_compilation_metrics.csv", "compile_times", None, "aot_eager", None, "cuda"),
    ("eellison/speedup_eager.csv", "performance", None, "eager", None, "cuda"),
    ("eellison/speedup_eager_compilation_metrics.csv", "compile_times", None, "eager", None, "cuda"),
    ("azhao20/speedup_inductor.csv", "performance", None, "inductor", None, "cuda"),
    ("pytorch-15a7c584/speedup_inductor.csv", "performance", None, "inductor", None, "cuda"),
    ("xuanzhang816/speedup_inductor.csv", "performance", None, "inductor", None, "cuda"),
    ("laurentdupin/accuracy_inductor.csv", "accuracy", None, "inductor", None, "cuda"),
    ("pytorch-0455d957/inductor.csv", "performance", None, "inductor", None, "cuda"),
    ("expected-perf/pytorch/expected_ci_perf_inductor_torchbench.csv", "performance", "torchbench", "inductor", None,
     "cuda"),
    ("expected-perf/rocm/expected_ci_perf_inductor_torchbench.csv", "performance", "torchbench", "inductor", None,
     "cuda"),
    ("ci_expected_accuracy/inference_timm_models0.csv", "expected", "timm_models", None, "inference", None),
    ("ci_expected_accuracy/inductor_huggingface_dynamic_inference.csv", "expected", "huggingface", "inductor_dynamic",
     "inference", None),
    ("ci_expected_accuracy/rocm/aot_eager_timm_inference.csv", "expected", "timm_models", "aot_eager", "inference",
     "rocm"),
    ("ci_expected_accuracy/cu124/dynamic_inductor_timm_training.csv", "expected", "timm_models", "dynamic_inductor",
     "training", "cuda"),
    # CI's own names (this project's captures of the harness, named as CI names them)
    ("../cpu-2.14.1-job-accuracy.csv", "accuracy", "timm_models", "inductor", "inference", "cpu"),
]
CI_NAMES = {"../cpu-2.14.1-job-accuracy.csv": "inductor_timm_models_float32_inference_cpu_accuracy.csv"}


def dict_rows(path: Path) -> list[dict]:
    with open(path, newline="") as fh:
        return [r for r in csv.DictReader(fh) if any((v or "").strip() for v in r.values())]


def _parse(rel: str):
    path = REAL / rel
    folders = tuple(p.name for p in Path(rel).parents if p.name not in ("", ".."))  # nearest first, as ingest gives them
    return parse_harness_csv(path.read_text(), CI_NAMES.get(rel, path.name), folders=folders)


@pytest.mark.parametrize("rel,kind,suite,backend,mode,device", NAMED, ids=[n[0] for n in NAMED])
def test_every_naming_generation_gives_its_rows_the_backend_of_its_name(rel, kind, suite, backend, mode, device):
    parsed = _parse(rel)
    rows = parsed.rows["harness_results"]
    assert rows and parsed.facts["kind"] == kind
    assert {(r["kind"], r["suite"], r["backend"], r["mode"]) for r in rows} == {(kind, suite, backend, mode)}
    assert {r["device"] for r in rows} == {device}
    # what no source names is NULL with a warning saying which, never a guessed word
    unknown = {"suite", "backend", "mode"} - {k for k, v in (("suite", suite), ("backend", backend), ("mode", mode)) if v}
    if kind != "expected":
        unknown |= {"dtype"} if rows[0]["dtype"] is None else set()
    warnings = [p.message for p in parsed.problems if p.severity == "warning" and " unknown for some rows" in p.message]
    if unknown:
        assert len(warnings) == 1 and set(warnings[0].split(" unknown")[0].split(", ")) == unknown
    else:
        assert warnings == []


def test_names_that_name_no_backend_leave_it_unknown():
    """A name chosen with --output, a 2022 expected file, a configuration without a backend's word:
    NULL, not the name's words."""
    for name in ("inductor_single_test.csv", "results.csv", "inference_timm_models_dynamic.csv",
                 "extra_dynamic_breaks.csv", "mytest_timm_models_float32_inference_cpu_performance.csv"):
        assert file_fields(name)["backend"] is None, name
    assert file_fields("speedup_inductor_compilation_metrics_huggingface_20230301.csv") | {"device": None} == {
        "suite": "huggingface", "backend": "inductor", "mode": None, "dtype": None, "device": None}
    assert file_fields("cpu_inductor_amp_freezing_torchbench_inference.csv") == {
        "suite": "torchbench", "backend": "inductor_freezing", "mode": "inference", "dtype": "amp", "device": "cpu"}
    assert file_fields("inductor_with_cudagraphs_huggingface_amp_training_cuda_performance.csv") == {
        "suite": "huggingface", "backend": "inductor_with_cudagraphs", "mode": "training", "dtype": "amp",
        "device": "cuda"}
    assert file_fields("torchao_noquant_timm_models_bfloat16_inference_cuda_performance.csv")["backend"] == \
        "torchao_noquant"
    # folders: a vocabulary word among a folder's words, a backend only where the folder is one
    named = folder_fields(["aot_eager", "huggingface-nightly", "2024-01-02", "cpu-vs-cuda"])
    assert named.values == {"suite": "huggingface", "backend": "aot_eager", "mode": None, "dtype": None,
                            "device": None}


# CI's dashboard names (.ci/pytorch/test.sh, test_perf_for_dashboard: `${backend}_<variant>_${suite}_${dtype}_
# ${mode}_${device}_${target}.csv`, the device one of HUD's cpu_x86, cpu_aarch64, cuda_h100, cuda_a10g, the
# dtype HUD's `quant` for cudagraphs_low_precision), its smoke tests' names, and pytorch/benchmark's torchao
# runs: the backend HUD's compiler name, or none
CI_NAMES_READ = {
    "inductor_no_cudagraphs_huggingface_bfloat16_inference_cpu_x86_performance.csv": "inductor_no_cudagraphs",
    "inductor_no_cudagraphs_timm_models_amp_training_cpu_aarch64_accuracy.csv": "inductor_no_cudagraphs",
    "inductor_with_cudagraphs_torchbench_amp_training_cuda_h100_performance.csv": "inductor_with_cudagraphs",
    "inductor_with_cudagraphs_freezing_autotune_torchbench_bfloat16_inference_cuda_a10g_performance.csv":
        "inductor_with_cudagraphs_freezing_autotune",
    "inductor_cudagraphs_low_precision_huggingface_quant_inference_cuda_performance.csv":
        "inductor_cudagraphs_low_precision",
    "inductor_aot_inductor_timm_models_bfloat16_inference_cuda_accuracy.csv": "inductor_aot_inductor",
    "inductor_deterministic_perf_torchbench_bfloat16_inference_cuda_performance.csv": "inductor_deterministic_perf",
    "inductor_cpp_wrapper_inference.csv": "inductor_cpp_wrapper",
    "torchao_autoquant_timm_models_bfloat16_inference_cuda_performance.csv": "torchao_autoquant",
    "dynamic_cpu_max_autotune_inductor_amp_freezing_torchbench_inference.csv": "dynamic_max_autotune_inductor_freezing",
    # a model's name in a smoke test's file name is no backend's word
    "inductor_inference_resnet50_inductor_float32_static_cpu_smoketest.csv": None,
    "inductor_warm_start_smoketest_AlbertForQuestionAnswering.csv": None,
}


def test_a_backend_is_made_of_backend_words_only():
    """A backend is read only from the words the harness, CI and HUD use for one: a user's prefix
    before CI's name (`mobilenetv2_100__inductor_...`) or a word after `speedup_inductor_` leaves the
    backend NULL, with a warning naming the words, never `mobilenetv2_inductor`; a word after CI's
    device is the device's (`cpu_x86`: not `inductor_no_cudagraphs_x86`). Every real file's name of
    every generation is read whole: no word of it is unread."""
    for name, backend in CI_NAMES_READ.items():
        assert file_fields(name)["backend"] == backend, name
    assert file_fields("inductor_no_cudagraphs_huggingface_bfloat16_inference_cpu_x86_performance.csv")["device"] == "cpu"
    assert file_fields("inductor_cudagraphs_low_precision_huggingface_quant_inference_cuda_performance.csv")["dtype"] \
        == "quant"
    for name, unread in (("mobilenetv2_100__inductor_timm_models_float32_inference_cpu_performance.csv", ["mobilenetv2"]),
                         ("mobilenetv2_100_inductor_timm_models_float32_inference_cpu_performance.csv", ["mobilenetv2"]),
                         ("speedup_inductor_myrun.csv", ["myrun"]), ("inductor_single_test.csv", ["single", "test"])):
        assert (file_fields(name)["backend"], unread_words(name)) == (None, unread), name
    for path in sorted(REAL.rglob("*.csv")):
        assert unread_words(path.name) == [], path

    # the real capture's CSV under a name its user prefixed: every other field read, the backend NULL
    text = (HERE / "cpu-2.14.1-mobilenetv2_100-performance.csv").read_text()
    prefixed = "mobilenetv2_100__inductor_timm_models_float32_inference_cpu_performance.csv"
    parsed = parse_harness_csv(text, prefixed)
    rows = parsed.rows["harness_results"]
    assert [(r["model"], r["suite"], r["backend"], r["mode"], r["dtype"], r["device"], r["speedup"]) for r in rows] == [
        ("mobilenetv2_100", "timm_models", None, "inference", "float32", "cpu", 2.729621)]
    warnings = [p.message for p in parsed.problems if p.severity == "warning"]
    assert len(warnings) == 1 and warnings[0].startswith("backend unknown") and "'mobilenetv2'" in warnings[0]
    # what the folder or the run's labels say fills it, and then nothing is unknown
    for named in (parse_harness_csv(text, prefixed, folders=("inductor",)),
                  parse_harness_csv(text, prefixed, given={"backend": "inductor"})):
        assert [r["backend"] for r in named.rows["harness_results"]] == ["inductor"]
        assert [p for p in named.problems if p.severity == "warning"] == []


def test_damaged_files_and_rows_are_errors_never_values(tmp_path):
    """ROCm's fork committed its expected CSV with merge-conflict lines: each is an error, the 54
    rows around them are kept. A performance CSV without its speedup column stores nothing (before:
    read as compilation metrics, its columns compile phases). A file cut inside its last row keeps
    the rows before it, never the cut one. Rows written under another header (the harness appended
    to a CSV another version began) are errors."""
    rocm = _parse("expected-perf/rocm/expected_ci_perf_inductor_torchbench.csv")
    text = (REAL / "expected-perf/rocm/expected_ci_perf_inductor_torchbench.csv").read_text().splitlines()
    conflict = [i + 1 for i, line in enumerate(text) if line.startswith(("<<<<<<<", "=======", ">>>>>>>"))]
    assert len(conflict) == 6
    assert sorted(p.line for p in rocm.problems if p.severity == "error") == conflict
    assert len(rocm.rows["harness_results"]) == len(text) - 1 - 6 == 54

    perf = (REAL / "azhao20/speedup_inductor.csv").read_text().splitlines()
    header = perf[0].split(",")
    keep = [i for i, c in enumerate(header) if c != "speedup"]
    no_speedup = "\n".join(",".join(line.split(",")[i] for i in keep) for line in perf) + "\n"
    parsed = parse_harness_csv(no_speedup, "speedup_inductor.csv")
    assert parsed.rows["harness_results"] == [] and parsed.facts["kind"] == "performance"
    assert [p.severity for p in parsed.problems] == ["error"] and "without its speedup column" in parsed.problems[0].message

    full = (REAL / "xuanzhang816/speedup_inductor.csv").read_text()
    cut = full[:full.rindex("1.709788") + 4]  # "...,1.70": the file ends inside its last row
    parsed = parse_harness_csv(cut, "speedup_inductor.csv")
    rows = parsed.rows["harness_results"]
    assert len(rows) == len(full.splitlines()) - 2 and all(r["abs_latency"] != 1.70 for r in rows)
    assert [(p.line, p.severity) for p in parsed.problems if p.severity == "error"] == [(len(full.splitlines()), "error")]

    # rows of other timings than the header names (the harness appends each model's as it comes): their
    # models kept, no timing, one warning; no error (tests/test_harness_metrics.py)
    metrics = _parse("eellison/inductor_compilation_metrics.csv")
    lines = (REAL / "eellison/inductor_compilation_metrics.csv").read_text().splitlines()
    longer = [i + 1 for i, line in enumerate(lines) if len(line.split(",")) != len(lines[0].split(","))]
    assert longer and not [p for p in metrics.problems if p.severity == "error"]
    assert [p.line for p in metrics.problems if "timed other functions" in p.message] == [longer[0]]
    assert len(metrics.rows["harness_results"]) == len(lines) - 1


# ---- ingested: groups, and inductor's numbers from inductor's files alone ------------------------------

@pytest.fixture(scope="module")
def real(tmp_path_factory):
    from inductor_warehouse.ingest.load import ingest_paths

    root = tmp_path_factory.mktemp("real")
    shutil.copytree(REAL, root / "real")
    db = str(root / "w.duckdb")
    summary = ingest_paths([root / "real"], db)
    assert summary.failed == 0
    return db, root / "real"


def _sql(db, text):
    from inductor_warehouse.store.api import Warehouse

    with Warehouse(db) as wh:
        return wh.sql(text).to_dicts()


def test_every_row_is_stored_once_in_the_group_its_file_names(real):
    db, root = real
    got = {(r["file"], r["job"].rsplit("/", 1)[-1]): r for r in _sql(
        db, "SELECT file, job, list(DISTINCT backend) AS backends, list(DISTINCT kind) AS kinds, count(*) AS n "
            "FROM harness_results GROUP BY file, job")}
    for rel, kind, _, backend, _, _ in NAMED:
        if rel.startswith(".."):
            continue
        path = REAL / rel
        errors = len(_parse(rel).rows["harness_results"])
        row = got[(path.name, path.parent.name)]
        assert (row["backends"], row["kinds"], row["n"]) == ([backend], [kind], errors), rel


def _one_rule(values: list[float], rule: str) -> float | None:
    values = [v for v in values if rule == "median0" or v > 0]
    if not values:
        return None
    if rule == "median0" and 0 in values:
        return 0.0
    s = sorted(values)
    return s[0] if rule == "min" else s[(len(s) - 1) // 2]


def test_inductors_suite_numbers_are_inductors_files_alone(real):
    """eellison's folder holds inductor.csv, speedup_aot_eager.csv and speedup_eager.csv of one job:
    three groups; inductor's numbers equal a computation from inductor.csv alone, each model's rows
    by the metrics' one rule (median of N speedups and compression ratios, min of N compilation
    latencies); without an accuracy run there is no pass rate and every model that ran counts."""
    db, root = real
    held = _sql(db, f"SELECT DISTINCT run_id FROM harness_results WHERE job = '{root / 'eellison'}'")
    assert len(held) == 1  # one job's folder, one run of its harness files
    got = {r["backend"]: r for r in _sql(db, f"SELECT * FROM harness_summary(NULL, ['{held[0]['run_id']}'])")}
    assert set(got) == {"inductor", "aot_eager", "eager"}
    for backend, name in (("inductor", "inductor.csv"), ("aot_eager", "speedup_aot_eager.csv"),
                          ("eager", "speedup_eager.csv")):
        models: dict[str, list[dict]] = {}
        for row in dict_rows(root / "eellison" / name):
            models.setdefault(row["name"], []).append(row)
        speedups = [_one_rule([float(r["speedup"]) for r in rows], "median0") for rows in models.values()]
        latencies = [_one_rule([float(r["compilation_latency"]) for r in rows], "min") for rows in models.values()]
        ratios = [_one_rule([float(r["compression_ratio"]) for r in rows], "median") for rows in models.values()]
        row = got[backend]
        assert (row["workloads"], row["pass_rate"], row["accuracy_checked"]) == (len(models), None, False)
        ran = [s for s in speedups if s and s > 0]
        assert row["geomean_speedup"] == pytest.approx(math.prod(ran) ** (1 / len(ran)), rel=1e-12), backend
        assert row["compilation_latency"] == pytest.approx(sum(latencies) / len(latencies), rel=1e-12), backend
        assert row["compression_ratio"] == pytest.approx(sum(ratios) / len(ratios), rel=1e-12), backend
    # BertForMaskedLM under inductor: the median of its three speedups and the least compile, never
    # aot_eager's 0.9657 and 6.7 s
    bert = _sql(db, "SELECT backend, speedup, compilation_latency, performance_samples "
                    f"FROM harness_models(NULL, ['{held[0]['run_id']}']) WHERE model = 'BertForMaskedLM' ORDER BY backend")
    assert [(b["backend"], b["speedup"], b["compilation_latency"], b["performance_samples"]) for b in bert] == [
        ("aot_eager", 0.9657, 6.7151, 2), ("inductor", 1.0377, 18.1809, 3)]


def test_hud_numbers_with_accuracy_equal_a_hand_computation_of_ci_named_files(tmp_path):
    """CI's names (`inductor_timm_models_float32_inference_cpu_{accuracy,performance}.csv`) beside an
    aot_eager pair of the same job: two groups, inductor's pass rate, geomean, mean compilation
    latency and compression ratio as HUD's compilerUtils.ts computes them from inductor's files."""
    from inductor_warehouse.ingest.load import ingest_paths

    job = tmp_path / "job"
    job.mkdir()
    perf = HERE / "cpu-2.14.1-mobilenetv2_100-performance.csv"
    acc = HERE / "cpu-2.14.1-job-accuracy.csv"
    for backend in ("inductor", "aot_eager"):
        shutil.copy(perf, job / f"{backend}_timm_models_float32_inference_cpu_performance.csv")
        shutil.copy(acc, job / f"{backend}_timm_models_float32_inference_cpu_accuracy.csv")
    # aot_eager's numbers differ: a slower model, one that failed its accuracy check
    slow = job / "aot_eager_timm_models_float32_inference_cpu_performance.csv"
    slow.write_text(slow.read_text().replace("mobilenetv2_100,2,2.729621", "mobilenetv2_100,2,0.929621"))
    failing = job / "aot_eager_timm_models_float32_inference_cpu_accuracy.csv"
    failing.write_text(failing.read_text().replace("deit_tiny_patch16_224.fb_in1k,2,pass",
                                                   "deit_tiny_patch16_224.fb_in1k,2,fail_accuracy"))
    db = str(tmp_path / "w.duckdb")
    assert ingest_paths([job], db, labels={"torch": "2.14.1"}).errors == 0
    got = {r["backend"]: r for r in _sql(db, "SELECT * FROM harness_summary(NULL, NULL)")}
    assert set(got) == {"inductor", "aot_eager"}
    for backend in got:
        acc_rows = {r["name"]: r for r in dict_rows(job / f"{backend}_timm_models_float32_inference_cpu_accuracy.csv")}
        accuracy = {m: r["accuracy"] for m, r in acc_rows.items()}
        performance = {r["name"]: r for r in dict_rows(job / f"{backend}_timm_models_float32_inference_cpu_performance.csv")}
        models = set(accuracy) | set(performance)
        passed = [m for m in models if (accuracy.get(m) in PASSING and float(performance.get(m, {}).get("speedup", 0)) != 0)
                  or accuracy.get(m) == "pass_due_to_skip"]
        ok = [m for m in models if accuracy.get(m) in PASSING and m in performance]  # HUD's geomean
        row = got[backend]
        assert (row["workloads"], row["passed_workloads"]) == (len(models), len(passed)), backend
        assert row["pass_rate"] == pytest.approx(len(passed) / len(models))
        if ok:
            assert row["geomean_speedup"] == pytest.approx(
                math.prod(float(performance[m]["speedup"]) for m in ok) ** (1 / len(ok)))
            # the performance run's compile, the accuracy run's where no performance run timed one
            latency = [float((performance.get(m) or acc_rows[m])["compilation_latency"]) for m in models
                       if accuracy.get(m) in PASSING]
            assert row["compilation_latency"] == pytest.approx(sum(latency) / len(latency))
        else:
            assert row["geomean_speedup"] is None
    assert got["inductor"]["geomean_speedup"] == pytest.approx(2.729621)
