"""A run's device comes from what the run says, also when it was killed before any kernel was
written: the manifest, the IR's layouts, the tensors the trace describes, a CPU-only torch build,
the folder names; NULL only when nothing says it.

The two killed runs are real: `iwh capture --timeout 6` / `--timeout 9` of the zoo's transformer
training step under torch 2.13 CPU, killed in Dynamo and in Inductor (tests/fixtures/SOURCES.md)."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path


from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import reader, FIXTURES

KILLED = FIXTURES / "killed"
IN_DYNAMO = KILLED / "transformer_killed_in_dynamo"
IN_INDUCTOR = KILLED / "transformer_killed_in_inductor"


def device_of(tmp_path: Path, run: Path) -> str | None:
    db = str(tmp_path / "wh.duckdb")
    summary = ingest_paths([run], db, force=True)
    assert summary.runs == 1, summary.line()
    con = reader(db)
    try:
        return con.execute("SELECT device FROM runs WHERE source_path = ?", [str(run)]).fetchone()[0]
    finally:
        con.close()


def copy(run: Path, dest: Path, drop=(), manifest_keys=None) -> Path:
    shutil.copytree(run, dest)
    for pattern in drop:
        for f in dest.glob(pattern):
            shutil.rmtree(f) if f.is_dir() else f.unlink()
    if manifest_keys is not None:
        m = json.loads((dest / "manifest.json").read_text())
        (dest / "manifest.json").write_text(json.dumps({k: v for k, v in m.items() if k in manifest_keys}))
    return dest


def test_the_killed_runs_wrote_no_kernel_and_their_manifests_name_no_device():
    for run in (IN_DYNAMO, IN_INDUCTOR):
        manifest = json.loads((run / "manifest.json").read_text())
        assert "device" not in manifest and manifest["timed_out"] and manifest["exit_code"] == 124
        assert not list(run.rglob("output_code.py"))
    assert not list(IN_DYNAMO.rglob("ir_*.txt"))


def test_device_of_a_run_killed_in_inductor_comes_from_its_ir(tmp_path):
    ir = next(IN_INDUCTOR.rglob("ir_pre_fusion.txt")).read_text()
    said = set(re.findall(r"\.group\.device = (\w+)", ir))
    assert said == {"cpu"}
    # neither the trace nor the torch build may answer: only the IR is left
    run = copy(IN_INDUCTOR, tmp_path / "run", drop=["trace"], manifest_keys={"model"})
    assert device_of(tmp_path, run) == "cpu"


def test_device_of_a_run_killed_in_dynamo_comes_from_the_tensors_its_trace_describes(tmp_path):
    log = next(IN_DYNAMO.glob("trace/*.log")).read_text()
    described = set(re.findall(r'"device": "device\(type=\'(\w+)\'', log))
    assert described == {"cpu"}
    run = copy(IN_DYNAMO, tmp_path / "run", manifest_keys={"model"})
    assert device_of(tmp_path, run) == "cpu"


def test_device_from_a_cpu_only_torch_build_then_from_folder_names_then_none(tmp_path):
    # the manifest's torch build `+cpu` can only have run on the CPU
    run = copy(IN_DYNAMO, tmp_path / "a" / "run", drop=["trace"], manifest_keys={"model", "torch"})
    assert json.loads((run / "manifest.json").read_text())["torch"].endswith("+cpu")
    assert device_of(tmp_path / "a", run) == "cpu"
    # a folder of the zoo's `{device}-torch{version}` kind
    run = copy(IN_DYNAMO, tmp_path / "b" / "cuda-torch2.11" / "run", drop=["trace"], manifest_keys={"model"})
    assert device_of(tmp_path / "b", run) == "cuda"
    # nothing says: NULL, not a guess
    run = copy(IN_DYNAMO, tmp_path / "c" / "run", drop=["trace"], manifest_keys={"model"})
    assert device_of(tmp_path / "c", run) is None


def test_the_manifest_wins(tmp_path):
    run = copy(IN_INDUCTOR, tmp_path / "run")
    m = json.loads((run / "manifest.json").read_text())
    (run / "manifest.json").write_text(json.dumps(m | {"device": "spyre"}))
    assert device_of(tmp_path, run) == "spyre"


def test_a_start_label_that_is_no_time_is_a_warning_and_the_run_is_kept(tmp_path):
    """A harness CSV under a manifest whose `started_at` is a number (seconds or milliseconds? not
    guessed): nothing else dates the run, and the warehouse, which would refuse a TIMESTAMP it cannot
    read, keeps the run undated with the label as it was written and a warning; an ISO time dates it."""
    csv = FIXTURES / "harness" / "cpu-2.14.1-mobilenetv2_100-performance.csv"
    cases = [(1700000000, None, 1), ("2024-07-19T02:00:00Z", "2024-07-19 02:00:00", 0)]
    if sys.version_info >= (3, 11):  # ISO 8601's basic form, which Python reads from 3.11 and DuckDB never
        cases.append(("20240719T020000Z", "2024-07-19 02:00:00", 0))
    for i, (value, started, warned) in enumerate(cases):
        run = tmp_path / f"run-{i}"
        run.mkdir()
        shutil.copy(csv, run)
        labels = {"suite": "timm_models", "backend": "inductor", "mode": "inference", "dtype": "float32"}
        (run / "manifest.json").write_text(json.dumps({"model": "mobilenetv2_100", **labels, "started_at": value}))
        db = str(tmp_path / f"wh-{i}.duckdb")
        summary = ingest_paths([run], db)
        assert (summary.runs, summary.errors) == (1, warned), summary.line()
        con = reader(db)
        try:
            got = con.execute("SELECT CAST(started_at AS VARCHAR), labels ->> 'started_at' FROM runs").fetchone()
            notes = con.execute("SELECT severity, message FROM ingest_errors").fetchall()
        finally:
            con.close()
        assert got == (started, str(value))
        assert len(notes) == warned and all(s == "warning" and "started_at" in m for s, m in notes)


NIGHTLY = FIXTURES / "harness/real/davidberard98-dynamo_benchmark_results"


def test_a_harness_only_run_takes_the_device_its_rows_name(tmp_path):
    """The 2022 nightly's CSVs say `cuda` in every row's `dev` column (read here with csv); the run
    compiled nothing, so no other source names a device (the pages hunt's D7)."""
    import csv

    night = NIGHTLY / "day_327_23_11_22_performance_float32_629"
    devs = {r["dev"] for f in night.glob("*.csv") for r in csv.DictReader(f.open()) if r.get("dev")}
    assert devs == {"cuda"}
    run = tmp_path / "2022_11_23"  # a folder name that names no device
    shutil.copytree(night, run)
    assert device_of(tmp_path, run) == "cuda"


def test_harness_rows_that_do_not_all_name_one_device_name_none(tmp_path):
    """CI's expected values (`name,graph_breaks`: no device) beside the nightly's `cuda` rows: the
    run holding both names no device, so the expected rows are not taken for CUDA ones."""
    run = tmp_path / "mixed"
    shutil.copytree(NIGHTLY / "day_327_23_11_22_performance_float32_629", run)
    expected = FIXTURES / "harness/real/ci_expected_accuracy/inference_timm_models0.csv"
    assert expected.read_text().splitlines()[0].split(",") == ["name", "graph_breaks"]
    shutil.copy(expected, run / expected.name)
    assert device_of(tmp_path, run) is None
