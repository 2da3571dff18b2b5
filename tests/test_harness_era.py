"""The benchmark harness of 2022-2023 (benchmarks/dynamo/common.py and runner.py of that era), read off
the nightlies davidberard98/dynamo_benchmark_results committed (tests/fixtures/harness/real/
davidberard98-dynamo_benchmark_results, tests/fixtures/SOURCES.md): a model whose process failed is a
row `dev,name,0,0.0000` under any header, a file whose first model failed has a blank header line,
`--coverage` and runner.py's merged tables are no compilation metrics, 2022's backends and XPU's amp
dtypes are named. Expected values are independent readings of the CSVs (csv module, HUD's rule)."""

from __future__ import annotations

import csv
import io
import math
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from inductor_warehouse.ingest.parsers.harness import csv_kind, harness_csv_kind, is_harness_csv, parse_harness_csv
from inductor_warehouse.ingest.parsers.harness_names import file_fields, folder_fields, unread_words

ROOT = Path(__file__).parent / "fixtures" / "harness" / "real" / "davidberard98-dynamo_benchmark_results"
APR23 = ROOT / "day_103_13_04_23_performance_float32_531"
NOV22 = ROOT / "day_326_22_11_22_performance_float32_285"
AUG22 = ROOT / "08_06_22_performance_8983"
COVERAGE = ROOT / "08_06_22_Coverage_30935" / "dynamo_eager_torchbench_float32_coverage_cuda.csv"
PASSING = {"pass", "pass_due_to_skip", "eager_variation"}


def lines(path: Path) -> list[list[str]]:
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


def hud(accuracy_csv: Path, performance_csv: Path, perf_columns: list[str] | None = None) -> dict:
    """HUD's pass count and geomean (compilerUtils.ts) from the two CSVs by hand: a 4-field row with
    batch size 0 is a model that did not run (speedup 0; accuracy fails); a blank header is read
    with the column names given."""
    acc = {}
    rows = lines(accuracy_csv)
    for r in rows[1:]:
        acc[r[1]] = "failed" if len(r) == 4 and r[2] == "0" and r[3] == "0.0000" else r[3]
    perf = {}
    rows = lines(performance_csv)
    names = perf_columns if not rows[0] else rows[0]
    for r in rows[1:]:
        perf[r[1]] = float(dict(zip(names, r, strict=False))["speedup"])
    models = set(acc) | set(perf)
    passed = [m for m in models if (acc.get(m) in PASSING and perf.get(m, 0) != 0) or acc.get(m) == "pass_due_to_skip"]
    speedups = [perf[m] for m in models if acc.get(m) in PASSING and perf.get(m)]
    return {"workloads": len(models), "passed": len(passed),
            "geomean": math.exp(sum(map(math.log, speedups)) / len(speedups))}


def _ingest(tmp_path: Path, *files: Path, labels: dict | None = None) -> str:
    from inductor_warehouse.ingest.load import ingest_paths

    folder = tmp_path / "in"
    folder.mkdir(exist_ok=True)
    for f in files:
        shutil.copy(f, folder / f.name)
    db = str(tmp_path / "w.duckdb")
    summary = ingest_paths([folder], db, labels=labels) if labels else ingest_paths([folder], db)
    assert summary.errors == 0, summary.error_rows
    return db


def _summary(db: str) -> list[dict]:
    from inductor_warehouse.store.api import Warehouse

    with Warehouse(db) as wh:
        return wh.query("harness/summary").to_dicts()


# ---- D1: a model whose process failed -------------------------------------------------------------

def test_a_failed_process_row_is_the_models_failure_not_damage():
    """Apr 2023: 6 of the accuracy file's 65 rows and 10 of the performance file's are
    `cuda,<model>,0,0.0000` under headers of 8 and 13 columns: each a model, failed, no error."""
    for name, failed_value, header_len in (("accuracy", ("accuracy", "infra_error"), 8),
                                           ("performance", ("speedup", 0.0), 13)):
        path = APR23 / f"inductor_torchbench_float32_training_cuda_{name}.csv"
        rows = lines(path)
        assert len(rows[0]) == header_len
        failed = {r[1] for r in rows[1:] if len(r) == 4}
        assert len(failed) == (6 if name == "accuracy" else 10)
        parsed = parse_harness_csv(path.read_text(), path.name)
        assert parsed.problems == []
        got = {r["model"]: r for r in parsed.rows["harness_results"]}
        assert set(got) == {r[1] for r in rows[1:]}
        for model in failed:
            column, value = failed_value
            assert got[model][column] == value and got[model]["batch_size"] == 0
            assert got[model]["columns"] == dict(zip(rows[0][:4], next(r for r in rows if r[1] == model), strict=True))
            assert got[model]["graph_breaks"] is None  # nothing measured: NULL, not 0


def test_failed_models_count_in_huds_pass_rate(tmp_path):
    """HUD's denominator holds every model: torchbench inductor, Apr 2023, 53 of 65 (not 53 of 59)."""
    acc = APR23 / "inductor_torchbench_float32_training_cuda_accuracy.csv"
    perf = APR23 / "inductor_torchbench_float32_training_cuda_performance.csv"
    want = hud(acc, perf)
    assert (want["workloads"], want["passed"]) == (65, 53)
    [row] = _summary(_ingest(tmp_path, acc, perf))
    assert (row["workloads"], row["passed_workloads"]) == (65, 53)
    assert row["pass_rate"] == pytest.approx(53 / 65, abs=5e-5)
    assert row["geomean_speedup"] == pytest.approx(want["geomean"], abs=5e-5)


def test_real_damage_is_still_an_error():
    """A failure row cut at the file's end (no newline) and a merge conflict's line stay errors."""
    text = (APR23 / "inductor_torchbench_float32_training_cuda_performance.csv").read_text()
    failure = next(line for line in text.split("\n") if line.count(",") == 3)  # `cuda,<model>,0,0.0000`
    name = "inductor_torchbench_float32_training_cuda_performance.csv"
    parsed = parse_harness_csv(text + failure, name)
    assert [(p.severity, p.line) for p in parsed.problems] == [("error", text.count("\n") + 1)]
    assert "cut short" in parsed.problems[0].message
    parsed = parse_harness_csv(text.replace(failure, "<<<<<<< HEAD\n" + failure), name)
    assert [(p.severity, p.message.split(":")[0]) for p in parsed.problems] == [
        ("error", "1 fields where the header has 13")]


def test_a_speedup_that_fell_to_zero_is_flagged_across_nightlies(tmp_path):
    """shufflenet_v2_x1_0 ran at 1.5384x on 2022-11-23 and failed on 2022-11-24: HUD's regression."""
    from inductor_warehouse.ingest.load import ingest_paths
    from inductor_warehouse.store.api import Warehouse

    db = str(tmp_path / "w.duckdb")
    for folder, night in (("day_327_23_11_22_performance_float32_629", "2022-11-23"),
                          ("day_328_24_11_22_performance_float32_321", "2022-11-24")):
        perf = {r[1]: r for r in lines(ROOT / folder / "inductor_torchbench_float32_training_cuda_performance.csv")}
        assert perf["shufflenet_v2_x1_0"][3] == ("1.5384" if night == "2022-11-23" else "0.0000")
        assert ingest_paths([ROOT / folder], db, labels={"nightly": night}).errors == 0
    with Warehouse(db) as wh:
        steps = wh.query("harness/model_changes", key="nightly", model="shufflenet_v2_x1_0").to_dicts()
    assert [(s["metric"], float(s["before"]), float(s["after"]), s["flag"]) for s in steps] == [
        ("speedup", 1.5384, 0.0, "regression")]


# ---- D2: a blank header line --------------------------------------------------------------------------

PERF_2022 = ["dev", "name", "batch_size", "speedup", "abs_latency", "compilation_latency", "compression_ratio"]


def test_a_blank_header_is_read_in_the_eras_column_order(tmp_path):
    """Nov 2022, inductor huggingface: the first model failed, so the header line is blank; the 42
    rows of 7 fields are 2022's `speedup_experiment` columns, 4 rows are failures. 40 of 46 pass,
    geomean 1.2256 (runner.py's own geomean.csv says 1.23x)."""
    perf = NOV22 / "inductor_huggingface_float32_training_cuda_performance.csv"
    acc = NOV22 / "inductor_huggingface_float32_training_cuda_accuracy.csv"
    head = perf.read_bytes()[:8192]
    assert head.startswith(b"\n") and is_harness_csv(head)
    assert harness_csv_kind(head, perf.name) == "performance"
    parsed = parse_harness_csv(perf.read_text(), perf.name)
    assert parsed.problems == [] and parsed.facts["kind"] == "performance"
    rows = lines(perf)[1:]
    got = parsed.rows["harness_results"]
    assert [r["model"] for r in got] == [r[1] for r in rows] and len(got) == 46
    for row, fields in zip(got, rows, strict=True):
        assert row["speedup"] == float(fields[3])
        if len(fields) == 7:
            assert row["columns"] == dict(zip(PERF_2022, fields, strict=True))
            assert (row["compilation_latency"], row["compression_ratio"]) == (float(fields[5]), float(fields[6]))
    want = hud(acc, perf, PERF_2022)
    assert (want["workloads"], want["passed"]) == (46, 40)
    assert want["geomean"] == pytest.approx(1.2256, abs=5e-5)
    [row] = _summary(_ingest(tmp_path, acc, perf))
    assert (row["workloads"], row["passed_workloads"]) == (46, 40)
    assert row["geomean_speedup"] == pytest.approx(want["geomean"], abs=5e-5)


def test_a_blank_header_of_august_2022_has_four_columns(tmp_path):
    """Aug 2022, ts_nvfuser torchbench: `dev,name,batch_size,speedup` rows under a blank line;
    its name (runner.py's `<backend>_<suite>_<dtype>_<mode>_<device>.csv`) says no kind: the rows do."""
    path = AUG22 / "ts_nvfuser_torchbench_float32_training_cuda.csv"
    parsed = parse_harness_csv(path.read_text(), path.name)
    assert parsed.problems == [] and parsed.facts["kind"] == "performance"
    rows = lines(path)[1:]
    assert [(r["model"], r["speedup"]) for r in parsed.rows["harness_results"]] == [(r[1], float(r[3])) for r in rows]
    kept = [float(r[3]) for r in rows if float(r[3]) > 0]
    geomean = math.exp(sum(map(math.log, kept)) / len(kept))
    assert geomean == pytest.approx(1.0648, abs=5e-5)  # the file, read here
    [row] = _summary(_ingest(tmp_path, path))  # and the warehouse's suite number of it
    assert (row["workloads"], row["geomean_speedup_all"]) == (len(rows), pytest.approx(geomean, abs=5e-5))


def test_a_blank_header_whose_rows_name_no_columns_is_an_error():
    """Rows of a width no header of the era had: an error row, never a silent skip."""
    text = (NOV22 / "inductor_huggingface_float32_training_cuda_performance.csv").read_text()
    cut = "\n".join(",".join(r.split(",")[:6]) for r in text.split("\n"))  # every row cut to 6 fields
    parsed = parse_harness_csv(cut, "inductor_huggingface_float32_training_cuda_performance.csv")
    assert [p.severity for p in parsed.problems] == ["error"] and "blank" in parsed.problems[0].message
    assert "harness_results" not in parsed.rows
    assert not is_harness_csv(b"\nsome,other,file\n1,2,3\n")


# ---- D3: coverage and runner.py's merged tables ----------------------------------------------------

def test_coverage_is_its_own_kind_and_runner_tables_are_no_compile_metrics():
    header = lines(COVERAGE)[0]
    assert csv_kind(header) == "coverage"
    parsed = parse_harness_csv(COVERAGE.read_text(), COVERAGE.name)
    assert parsed.problems == []
    rows = lines(COVERAGE)[1:]
    got = parsed.rows["harness_results"]
    assert [r["model"] for r in got] == [r[1] for r in rows]
    assert sum(len(r) == 4 for r in rows) == 5  # the failure rows, stored as the others
    for row, fields in zip(got, rows, strict=True):
        assert row["kind"] == "coverage" and row["speedup"] is None
        assert row["columns"] == dict(zip(header[:len(fields)], fields, strict=True))
    assert (got[0]["backend"], got[0]["suite"]) == ("dynamo_eager", "torchbench")
    merged = AUG22 / "torchbench_float32_training_cuda.csv"
    assert lines(merged)[0] == ["dev", "name", "batch_size", "ts_nvfuser", "aot_nvfuser", "inductor_cudagraphs"]
    assert csv_kind(lines(merged)[0]) is None and not is_harness_csv(merged.read_bytes())
    # a real compilation-metrics header of the era is still one
    assert csv_kind(["dev", "name", "batch_size", "_compile", "OutputGraph.call_user_compiler"]) == "compile_times"
    assert csv_kind(["dev", "name", "batch_size", "convert_frame_assert.<locals>._convert_frame_assert"]) == (
        "compile_times")


# ---- D6: 2022's backends, XPU's amp dtypes ---------------------------------------------------------

@pytest.mark.parametrize("name,backend,dtype", [
    ("nvprims_nvfuser_huggingface_float32_training_cuda_accuracy.csv", "nvprims_nvfuser", "float32"),
    ("nvprims_aten_torchbench_float32_training_cuda_performance.csv", "nvprims_aten", "float32"),
    ("aot_nvprims_nvfuser_timm_models_float32_training_cuda_performance.csv", "aot_nvprims_nvfuser", "float32"),
    ("trt_torchbench_float32_inference_cuda_performance.csv", "trt", "float32"),
    ("inductor_huggingface_amp_bf16_training_xpu_accuracy.csv", "inductor", "amp_bf16"),
    ("inductor_huggingface_amp_fp16_inference_xpu_performance.csv", "inductor", "amp_fp16"),
    ("inductor_huggingface_amp_training_cuda_accuracy.csv", "inductor", "amp"),
])
def test_2022_backends_and_xpu_amp_dtypes_are_named(name, backend, dtype):
    fields = file_fields(name)
    assert (fields["backend"], fields["dtype"]) == (backend, dtype) and unread_words(name) == []


def test_xpu_folders_say_their_amp_dtype():
    """torch-xpu-ops' inductor_xpu_test.sh: `inductor_log/<suite>/<dt>/`."""
    assert folder_fields(["amp_bf16", "huggingface", "inductor_log"]).values["dtype"] == "amp_bf16"
    assert folder_fields(["amp_fp16"]).values["dtype"] == "amp_fp16"


def test_nvprims_nvfuser_is_a_group_of_its_own(tmp_path):
    acc = NOV22 / "nvprims_nvfuser_huggingface_float32_training_cuda_accuracy.csv"
    perf = NOV22 / "nvprims_nvfuser_huggingface_float32_training_cuda_performance.csv"
    want = hud(acc, perf, PERF_2022)
    [row] = _summary(_ingest(tmp_path, acc, perf))
    assert row["backend"] == "nvprims_nvfuser"
    assert (row["workloads"], row["passed_workloads"]) == (want["workloads"], want["passed"]) == (46, 29)
    assert row["geomean_speedup"] == pytest.approx(want["geomean"], abs=5e-5)


# ---- D7: a folder of CSVs without a manifest -------------------------------------------------------

def test_a_folder_of_csvs_is_one_run_at_the_folder_and_errors_name_the_file(tmp_path):
    """One folder, two suites' CSVs and a damaged one: the run is the folder, named after it; an
    error's path is the damaged file's own."""
    from inductor_warehouse.cli.main import cli
    from inductor_warehouse.store.api import Warehouse

    folder = tmp_path / "nightly"
    folder.mkdir()
    for f in (NOV22 / "inductor_huggingface_float32_training_cuda_accuracy.csv",
              APR23 / "inductor_torchbench_float32_training_cuda_accuracy.csv"):
        shutil.copy(f, folder / f.name)
    damaged = folder / "inductor_timm_models_float32_training_cuda_performance.csv"
    damaged.write_text("dev,name,batch_size,speedup,abs_latency\ncuda,x,1,1.5\n")  # a row cut short
    db = str(tmp_path / "w.duckdb")
    res = CliRunner().invoke(cli, ["--db", db, "ingest", str(folder)])
    assert res.exit_code == 0, res.output
    assert f"error: {damaged}:2: [harness]" in res.output
    with Warehouse(db) as wh:
        runs = wh.sql("SELECT model, source_path FROM runs").to_dicts()
    assert runs == [{"model": "nightly", "source_path": str(folder)}]


# ---- D5: CI's graph-break gate against the expected CSVs ---------------------------------------------

EXPECTED = Path(__file__).parent / "fixtures" / "harness"


def test_the_gate_pairs_a_workload_with_its_own_configs_expected_file(tmp_path):
    """CI (check_graph_breaks.py) compares a run with the one expected CSV of its config: a CPU
    inductor job's rows with cpu_inductor_timm_inference.csv, not also with the CUDA inductor and
    aot_eager files beside it. The CUDA inductor file is given a graph break more for
    mobilenetv2_100 (an edit, here only) so that pairing with it would fail the model."""
    from inductor_warehouse.ingest.load import ingest_paths
    from inductor_warehouse.store.api import Warehouse

    expected = tmp_path / "ci_expected_accuracy"
    expected.mkdir()
    cpu = EXPECTED / "cpu_inductor_timm_inference.csv"
    shutil.copy(cpu, expected / cpu.name)
    shutil.copy(EXPECTED / "real" / "ci_expected_accuracy" / "pytorch-9e3c21be" / "aot_eager_timm_inference.csv",
                expected / "aot_eager_timm_inference.csv")
    cuda = (EXPECTED / "real" / "ci_expected_accuracy" / "pytorch-04e409b4" / "inductor_timm_inference.csv").read_text()
    assert "\nmobilenetv2_100,pass,0\n" in cuda
    (expected / "inductor_timm_inference.csv").write_text(cuda.replace("\nmobilenetv2_100,pass,0\n",
                                                                         "\nmobilenetv2_100,pass,7\n"))
    actual = tmp_path / "actual"
    actual.mkdir()
    shutil.copy(EXPECTED / "cpu-2.14.1-job-accuracy.csv", actual / "cpu-2.14.1-job-accuracy.csv")
    db = str(tmp_path / "w.duckdb")
    assert ingest_paths([expected], db).errors == 0
    labels = {"torch": "2.14.1", "suite": "timm_models", "mode": "inference", "backend": "inductor", "dtype": "float32"}
    assert ingest_paths([actual], db, labels=labels).errors == 0
    want = {r["name"]: int(r["graph_breaks"]) for r in csv.DictReader(
        line for line in cpu.read_text().splitlines() if line.strip())}
    models = [r["name"] for r in csv.DictReader(io.StringIO((actual / "cpu-2.14.1-job-accuracy.csv").read_text()))]
    with Warehouse(db) as wh:
        gate = wh.query("harness/graph_break_gate", head="2.14.1").to_dicts()
    assert sorted(r["model"] for r in gate) == sorted(models)  # one row a model
    for r in gate:
        assert r["expected_graph_breaks"] == want.get(r["model"]), r["model"]
    assert {r["model"]: r["status"] for r in gate}["mobilenetv2_100"] == "PASS"
