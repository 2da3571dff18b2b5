"""The harness's results as Intel's XPU CI writes them (tests/fixtures/SOURCES.md): torch-xpu-ops'
runner tables (`dev,suite,name,dtype,mode,scenario,batch_size,...`, an earlier `scenario,suite,dtype,
mode,dev,...`, a failed model's short row), its expected-accuracy tables (a dtype a column), names
joined with `-`, modes with `-`, the JSON records' `amp` beside `amp_bf16`/`amp_fp16`, a BOM. Every
value is checked against the files read here with Python's csv and json modules."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from inductor_warehouse.ingest.discover import discover
from inductor_warehouse.ingest.parsers.harness import harness_csv_kind, parse_harness_csv, parse_harness_json
from inductor_warehouse.ingest.parsers.harness_names import file_fields

HERE = Path(__file__).parent / "fixtures" / "harness"
XPU = HERE / "constructed" / "xpu"
XPU_EXPECTED = HERE / "real" / "intel__torch-xpu-ops-ab84f925" / "ci_expected_accuracy"
PYTORCH_EXPECTED = HERE / "real" / "ci_expected_accuracy"
# HUD's passing accuracies (torchci components/benchmark/compilers/common.ts PASSING_ACCURACY)
PASSING = {"pass", "pass_due_to_skip", "eager_variation"}
RUNNER_TABLES = sorted(p.relative_to(XPU).as_posix() for p in XPU.glob("D*/**/*.csv"))


def _parse(path: Path, sidecar=None):
    folders = tuple(p.name for p in path.relative_to(XPU if XPU in path.parents else HERE).parents if p.name)
    return parse_harness_csv(path.read_text(encoding="utf-8"), path.name, sidecar, folders=folders)


def _table(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = [r for r in csv.reader(fh) if r and not r[0].startswith("#")]
    return rows[0], rows[1:]


def _problems(parsed, severity=None):
    return [p.message for p in parsed.problems if severity is None or p.severity == severity]


@pytest.mark.parametrize("rel", RUNNER_TABLES, ids=[r.split("/")[0] + "-" + r.rsplit("-", 1)[-1] for r in RUNNER_TABLES])
def test_a_runner_table_is_a_harness_csv_whose_columns_name_the_rows_group(rel):
    path = XPU / rel
    assert harness_csv_kind(path.read_bytes()[:4096], path.name) in ("accuracy", "performance")
    header, rows = _table(path)
    parsed = _parse(path)
    got = parsed.rows["harness_results"]
    assert [r["model"] for r in got] == [r[header.index("name")] for r in rows]
    first = header.index("batch_size") + 1  # the first result column, in every row the runner writes
    for row, fields in zip(got, rows, strict=True):
        assert row["kind"] == header[first] if header[first] == "accuracy" else row["kind"] == "performance"
        assert (row["suite"], row["dtype"], row["mode"]) == tuple(fields[header.index(c)] for c in ("suite", "dtype", "mode"))
        assert (row["backend"], row["device"]) == ("inductor", fields[header.index("dev")])  # --backend=inductor always
        assert row["batch_size"] == int(fields[header.index("batch_size")])
        if row["kind"] == "accuracy":
            assert row["accuracy"] == fields[first]
        else:
            assert row["speedup"] == float(fields[first])
        if len(fields) == len(header):  # a whole row: every column by its header
            assert row["columns"] == dict(zip(header, fields, strict=True))
            if "compilation_latency" in header:
                assert row["compilation_latency"] == float(fields[header.index("compilation_latency")])
                assert row["graph_breaks"] == int(fields[header.index("graph_breaks")])
    # a row of another width is a model the runner gave no result (batch size 0), or one written under
    # such a model's short header; nothing is an error
    assert [p for p in parsed.problems if p.severity == "error"] == []


def test_a_model_without_result_is_a_failure_as_hud_counts_it():
    """run_inductor.py's fallback rows (`timeout`, `core_dump`, `Memory>0.9`; speedup 0) under a whole
    header, and the earlier runner's `crashed`: failed, never dropped or taken for damage."""
    failed = {}
    for rel in RUNNER_TABLES:
        header, rows = _table(XPU / rel)
        by_model = {r["model"]: r for r in _parse(XPU / rel).rows["harness_results"]}
        for fields in rows:
            if fields[header.index("batch_size")] == "0":
                failed[rel, fields[header.index("name")]] = by_model[fields[header.index("name")]]
    accuracies = {r["accuracy"] for r in failed.values() if r["kind"] == "accuracy"}
    assert accuracies == {"timeout", "Memory>0.9", "crashed"} and not accuracies & PASSING
    assert [r["speedup"] for r in failed.values() if r["kind"] == "performance"] == [0.0]
    for row in failed.values():  # the fallback's latencies are no harness columns: nothing is stored of them
        assert row["abs_latency"] is None and row["graph_breaks"] is None


def test_rows_under_a_failed_first_models_header_keep_their_result_and_say_what_is_lost():
    path = next(XPU.glob("D2/**/*.csv"))
    header, rows = _table(path)
    parsed = _parse(path)
    got = parsed.rows["harness_results"]
    assert [(r["model"], r["accuracy"], r["batch_size"]) for r in got] == \
           [(f[2], f[7], int(f[6])) for f in rows]
    wider = [i + 2 for i, f in enumerate(rows) if len(f) > len(header)]
    assert len(wider) == 2 and all(r["graph_breaks"] is None for r in got)
    warnings = _problems(parsed, "warning")
    assert len(warnings) == 1 and warnings[0].startswith(f"2 rows (line {wider[0]}, {wider[1]}) wider than the header")


def test_the_json_records_amp_does_not_erase_the_precision_its_name_and_amp_dtype_say():
    got = {}
    for csv_path in sorted(XPU.glob("AJ/**/*.csv")):
        text = csv_path.with_suffix(".json").read_text()
        records = [json.loads(line) for line in text.splitlines()]
        # the records say `amp` of both, and the precision only in extra_info
        assert {r["benchmark"]["dtype"] for r in records} == {"amp"}
        amp_dtype = {r["benchmark"]["extra_info"]["amp_dtype"] for r in records}
        models = parse_harness_json(text).facts["models"]
        assert {m["dtype"] for m in models.values()} == {{"bfloat16": "amp_bf16", "float16": "amp_fp16"}[amp_dtype.pop()]}
        rows = _parse(csv_path, models).rows["harness_results"]
        got[csv_path.parent.name] = {r["dtype"] for r in rows}
        # without extra_info.amp_dtype, the name's precision is the more specific word and wins
        bare = "\n".join(line.replace('"amp_dtype": "', '"amp_dtype_": "') for line in text.splitlines())
        bare_models = parse_harness_json(bare).facts["models"]
        assert {m["dtype"] for m in bare_models.values()} == {"amp"}
        assert {r["dtype"] for r in _parse(csv_path, bare_models).rows["harness_results"]} == {csv_path.parent.name}
    assert got == {"amp_bf16": {"amp_bf16"}, "amp_fp16": {"amp_fp16"}}


def test_a_ci_name_says_more_of_the_backend_than_the_json_records():
    """CI runs `--backend inductor` for every configuration its file names tell apart
    (`inductor_with_cudagraphs_...`, `inductor_no_cudagraphs_...`): the name's word is the more specific."""
    csv_path = next(XPU.glob("AJ/**/*amp_bf16*.csv"))
    models = parse_harness_json(csv_path.with_suffix(".json").read_text()).facts["models"]
    assert {m["backend"] for m in models.values()} == {"inductor"}
    for config in ("inductor_with_cudagraphs", "inductor_no_cudagraphs"):
        name = f"{config}_timm_models_amp_training_cuda_accuracy.csv"
        rows = parse_harness_csv(csv_path.read_text(), name, models).rows["harness_results"]
        assert {(r["backend"], r["dtype"]) for r in rows} == {(config, "amp_bf16")}


# (file, suite, backend, mode, dtype, device): what the XPU scripts' names say
DASHED = [
    # intel-xpu-backend-for-triton's modes (scripts/inductor_xpu_test.sh): inference and a variant kept as written
    ("B1/inductor_log/timm_models/amp_bf16/inductor_timm_models_amp_bf16_inference-no-freezing_xpu_accuracy.csv",
     "timm_models", "inductor_no_freezing", "inference", "amp_bf16", "xpu"),
    ("B2/logs-timm_models-amp_bf16-inference-with-freezing-accuracy/timm_models/amp_bf16/"
     "inductor_timm_models_amp_bf16_inference-with-freezing_xpu_accuracy.csv",
     "timm_models", "inductor_with_freezing", "inference", "amp_bf16", "xpu"),
    ("C/inductor-timm_models-amp_fp16-training-xpu-accuracy.csv", "timm_models", "inductor", "training", "amp_fp16",
     "xpu"),
    ("E/Inductor-XPU-E2E-Data-12345-huggingface-1-1/huggingface/amp_bf16/inference/accuracy/"
     "inductor-results-huggingface-amp_bf16-inference-xpu-accuracy.csv",
     "huggingface", "inductor", "inference", "amp_bf16", "xpu"),
]


@pytest.mark.parametrize("rel,suite,backend,mode,dtype,device", DASHED, ids=[d[0].split("/")[0] for d in DASHED])
def test_names_joined_with_dashes_say_their_group_and_a_healthy_file_warns_of_nothing(rel, suite, backend, mode, dtype,
                                                                                      device):
    path = XPU / rel
    parsed = _parse(path)
    header, rows = _table(path)
    got = parsed.rows["harness_results"]
    assert [(r["model"], r["accuracy"]) for r in got] == [(f[1], f[3]) for f in rows]
    assert {(r["suite"], r["backend"], r["mode"], r["dtype"], r["device"]) for r in got} == \
           {(suite, backend, mode, dtype, device)}
    assert parsed.problems == []


def test_words_of_a_name_joined_with_underscores_read_as_before():
    assert file_fields("inductor_with_cudagraphs_timm_models_amp_training_cuda_performance.csv") == {
        "suite": "timm_models", "backend": "inductor_with_cudagraphs", "mode": "training", "dtype": "amp",
        "device": "cuda"}
    assert file_fields("results.csv") == dict.fromkeys(("suite", "backend", "mode", "dtype", "device"))


XPU_TABLES = sorted(p.relative_to(XPU_EXPECTED).as_posix() for p in XPU_EXPECTED.rglob("*.csv"))


@pytest.mark.parametrize("rel", XPU_TABLES)
def test_torch_xpu_ops_expected_tables_are_a_row_a_model_and_dtype(rel):
    path = XPU_EXPECTED / rel
    assert harness_csv_kind(path.read_bytes()[:4096], path.name) == "expected"
    header, rows = _table(path)  # `#` lines are comments, as check_expected.py reads them (comment='#')
    assert header == ["name", "float32", "bfloat16", "float16", "amp_bf16", "amp_fp16"]
    parsed = _parse(path)
    assert parsed.problems == []
    got = parsed.rows["harness_results"]
    assert [(r["model"], r["dtype"], r["accuracy"]) for r in got] == \
           [(f[0], d, f[i]) for f in rows for i, d in enumerate(header) if i and f[i]]
    suite, mode = path.stem.removeprefix("inductor_").rsplit("_", 1)  # inductor_<suite>_<mode>.csv
    assert {(r["kind"], r["suite"], r["backend"], r["mode"]) for r in got} == {("expected", suite, "inductor", mode)}


def test_pytorch_expected_tables_of_other_configurations():
    path = PYTORCH_EXPECTED / "pytorch-3691ea50" / "dynamic_cpu_max_autotune_inductor_amp_freezing_huggingface_inference.csv"
    header, rows = _table(path)
    parsed = _parse(path)
    got = parsed.rows["harness_results"]
    assert parsed.problems == [] and len(got) == len(rows) == 26
    assert [(r["model"], r["accuracy"], r["graph_breaks"]) for r in got] == \
           [(f[0], f[header.index("accuracy")], int(f[header.index("graph_breaks")])) for f in rows]
    assert {(r["suite"], r["backend"], r["mode"], r["dtype"], r["device"]) for r in got} == \
           {("huggingface", "dynamic_max_autotune_inductor_freezing", "inference", "amp", "cpu")}
    path = PYTORCH_EXPECTED / "pytorch-48756283" / "inductor_distributed_inference.csv"
    header, rows = _table(path)
    parsed = _parse(path)
    assert [(r["model"], r["backend"], r["mode"], r["suite"]) for r in parsed.rows["harness_results"]] == \
           [(f[0], "inductor_distributed", "inference", None) for f in rows]
    assert [m.split(" unknown")[0] for m in _problems(parsed, "warning")] == ["suite"]  # no suite in its name


def test_a_bom_before_the_header_is_no_part_of_it(tmp_path):
    path = next(XPU.glob("BOM/*.csv"))
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")
    assert harness_csv_kind(raw[:4096], path.name) == "performance"
    header, rows = _table(path)
    parsed = _parse(path)
    got = parsed.rows["harness_results"]
    assert parsed.problems == [] and [(r["model"], r["speedup"]) for r in got] == \
           [(f[1], float(f[header.index("speedup")])) for f in rows]
    assert list(got[0]["columns"]) == header


def test_discovery_takes_every_xpu_file_for_the_harness():
    found = discover([XPU, XPU_EXPECTED])
    harness = sorted(a.path.name for r in found.runs for a in r.artifacts if a.kind == "harness")
    on_disk = sorted(p.name for p in [*XPU.rglob("*.csv"), *XPU.rglob("*.json"), *XPU_EXPECTED.rglob("*.csv")])
    assert harness == on_disk and not found.skipped.get("unrecognised file")
