"""The benchmark harness's CSVs: read by header in every version, one row per CSV row, every column
kept; recognised by content; linked to the runs of their models; HUD's metrics and gates."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from ingest.discover import discover
from ingest.parsers.harness import (FLOAT_COLUMNS, INT_COLUMNS, csv_kind, file_words, is_harness_csv,
                                    is_harness_json, parse_harness_csv, parse_harness_json)

FIXTURES = Path(__file__).parent / "fixtures" / "harness"
# real CSVs: (fixture, the name the harness gave it)
REAL = [
    ("cpu-2.13-deit_tiny-performance.csv", "inductor_timm_models_float32_inference_cpu_performance.csv"),
    ("cpu-2.13-deit_tiny-performance_compilation_metrics.csv",
     "inductor_timm_models_float32_inference_cpu_performance_compilation_metrics.csv"),
    ("cpu-2.13-repvgg_a2-accuracy.csv", "inductor_timm_models_float32_inference_cpu_accuracy.csv"),
    ("cpu-2.14.1-mobilenetv2_100-performance.csv", "inductor_timm_models_float32_inference_cpu_performance.csv"),
    ("cpu-2.14.1-job-accuracy.csv", "inductor_timm_models_float32_inference_cpu_accuracy.csv"),
    ("inductor_single_test.csv", "inductor_single_test.csv"),
    ("cpu_inductor_timm_inference.csv", "cpu_inductor_timm_inference.csv"),
]


def dict_rows(path: Path) -> list[dict]:
    """The file as Python's csv.DictReader reads it, blank lines left out."""
    with open(path, newline="") as fh:
        return [r for r in csv.DictReader(fh) if any((v or "").strip() for v in r.values())]


@pytest.mark.parametrize("fixture,name", REAL, ids=[r[0] for r in REAL])
def test_every_row_and_column_as_written(fixture, name):
    path = FIXTURES / fixture
    parsed = parse_harness_csv(path.read_text(), name)
    assert parsed.problems == []
    expected = dict_rows(path)
    rows = parsed.rows["harness_results"]
    assert len(rows) == len(expected) > 0
    for row, want in zip(rows, expected, strict=True):
        assert row["columns"] == {k: v for k, v in want.items()}
        assert row["model"] == want["name"]
        assert row["device"] == want.get("dev", row["device"])
        assert row["accuracy"] == want.get("accuracy")
        for column in FLOAT_COLUMNS:
            assert row[column] == (float(want[column]) if column in want else None), column
        for column in INT_COLUMNS:
            assert row[column] == (int(want[column]) if column in want else None), column


def test_kinds_by_header_not_name():
    kinds = {fixture: parse_harness_csv((FIXTURES / fixture).read_text(), "results.csv").facts["kind"]
             for fixture, _ in REAL}
    assert kinds == {
        "cpu-2.13-deit_tiny-performance.csv": "performance",
        "cpu-2.13-deit_tiny-performance_compilation_metrics.csv": "compile_times",
        "cpu-2.13-repvgg_a2-accuracy.csv": "accuracy",
        "cpu-2.14.1-mobilenetv2_100-performance.csv": "performance",
        "cpu-2.14.1-job-accuracy.csv": "accuracy",
        "inductor_single_test.csv": "performance",
        "cpu_inductor_timm_inference.csv": "expected",
    }
    for fixture, _ in REAL:
        assert is_harness_csv((FIXTURES / fixture).read_bytes()[:8192])
    assert not is_harness_csv(b"a,b,c\n1,2,3\n")
    assert not is_harness_csv(b"\x89PNG\r\n")
    assert csv_kind(["dev", "name", "batch_size"]) is None  # --find-batch-sizes writes no header


def test_headers_differ_across_releases_and_are_read_by_name():
    """2.13's harness writes no fallbacks_to_eager, 2.14's does (before graph_breaks): the same
    counter is at another position, and read the same."""
    old = next(csv.reader(io.StringIO((FIXTURES / "cpu-2.13-deit_tiny-performance.csv").read_text())))
    new = next(csv.reader(io.StringIO((FIXTURES / "cpu-2.14.1-mobilenetv2_100-performance.csv").read_text())))
    assert "fallbacks_to_eager" not in old and "fallbacks_to_eager" in new
    assert old.index("graph_breaks") != new.index("graph_breaks")
    # the same file with its counters in another order gives the same rows
    path = FIXTURES / "cpu-2.14.1-mobilenetv2_100-performance.csv"
    rows = list(csv.reader(io.StringIO(path.read_text())))
    keys = ["dev", "name", "batch_size"]
    head = keys + [c for c in reversed(rows[0]) if c not in keys]
    idx = [rows[0].index(c) for c in head]
    reordered = "\n".join(",".join(r[i] for i in idx) for r in rows) + "\n"
    a = parse_harness_csv(path.read_text(), path.name).rows["harness_results"]
    b = parse_harness_csv(reordered, path.name).rows["harness_results"]
    assert [dict(r, columns=None) for r in a] == [dict(r, columns=None) for r in b]
    assert a[0]["columns"] == b[0]["columns"]  # a dict: the same columns and values, whatever the order


def test_file_names_say_suite_mode_dtype_device_backend():
    assert file_words("inductor_timm_models_float32_inference_cpu_performance.csv") == {
        "suite": "timm_models", "mode": "inference", "dtype": "float32", "device": "cpu", "backend": "inductor"}
    assert file_words("inductor_no_cudagraphs_huggingface_amp_training_cuda_accuracy.csv") == {
        "suite": "huggingface", "mode": "training", "dtype": "amp", "device": "cuda",
        "backend": "inductor_no_cudagraphs"}
    # ci_expected_accuracy: <device>_<backend>_<suite>_<mode>.csv, timm for timm_models
    assert file_words("cpu_inductor_timm_inference.csv") == {
        "suite": "timm_models", "mode": "inference", "dtype": None, "device": "cpu", "backend": "inductor"}
    assert file_words("dynamic_inductor_torchbench_training.csv")["backend"] == "dynamic_inductor"
    assert file_words("speedup_inductor.csv") == dict.fromkeys(("suite", "mode", "dtype", "device", "backend"))


def test_json_records_name_what_the_csv_does_not():
    path = FIXTURES / "cpu-2.13-deit_tiny-performance.json"
    assert is_harness_json(path.read_bytes()[:8192])
    models = parse_harness_json(path.read_text()).facts["models"]
    assert models == {"deit_tiny_patch16_224.fb_in1k": {
        "mode": "inference", "dtype": "float32", "backend": "inductor", "suite": "timm_models"}}
    rows = parse_harness_csv((FIXTURES / "cpu-2.13-deit_tiny-performance.csv").read_text(), "results.csv",
                             models).rows["harness_results"]
    assert (rows[0]["suite"], rows[0]["mode"], rows[0]["dtype"], rows[0]["backend"]) == \
           ("timm_models", "inference", "float32", "inductor")


def test_expected_csv_blank_lines_and_unknown_columns():
    parsed = parse_harness_csv((FIXTURES / "cpu_inductor_timm_inference.csv").read_text(), "cpu_inductor_timm_inference.csv")
    rows = parsed.rows["harness_results"]
    assert len(rows) == 61 and all(r["kind"] == "expected" and r["graph_breaks"] == 0 for r in rows)
    assert rows[0]["columns"]["cpp_to_python_exceptions_raised"] == "0"  # a column no typed field has: kept
    assert rows[0]["line"] == 5  # its line in the file, blank lines counted
    assert {(r["suite"], r["mode"], r["device"], r["backend"]) for r in rows} == {("timm_models", "inference", "cpu", "inductor")}


def test_bad_rows_are_problems_and_the_rest_is_kept():
    text = ("dev,name,batch_size,speedup,abs_latency,graph_breaks\n"
            "cpu,good,2,1.5,3.0,0\n"
            "cpu,letters,2,fast,3.0,0\n"
            "cpu,fraction,2,1.1,3.0,0.5\n"
            "cpu,,2,1.1,3.0,0\n"
            "cpu,short,2\n")
    parsed = parse_harness_csv(text, "x_performance.csv")
    rows = {r["model"]: r for r in parsed.rows["harness_results"]}
    assert set(rows) == {"good", "letters", "fraction", "short"}
    assert rows["good"]["speedup"] == 1.5 and rows["letters"]["speedup"] is None
    assert rows["fraction"]["graph_breaks"] is None and rows["short"]["speedup"] is None
    messages = [(p.line, p.severity, p.message) for p in parsed.problems]
    assert (3, "warning", "speedup 'fast' is not a number; stored NULL") in messages
    assert (4, "warning", "graph_breaks '0.5' is not a whole number; stored NULL") in messages
    assert (5, "error", "row without a model name") in messages
    assert (6, "warning", "3 fields where the header has 6") in messages
    assert parse_harness_csv("", "x.csv").problems[0].message.startswith("no header")


def test_discovery_recognises_harness_files_by_content(tmp_path):
    (tmp_path / "results.csv").write_text((FIXTURES / "cpu-2.13-repvgg_a2-accuracy.csv").read_text())
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    found = discover([tmp_path])
    assert len(found.runs) == 1
    run = found.runs[0]
    assert [a.path.name for a in run.artifacts] == ["results.csv"] and run.artifacts[0].kind == "harness"
    assert found.skipped["unrecognised file"] == 1
