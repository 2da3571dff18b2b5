"""The benchmark harness's CSVs: read by header in every version, one row per CSV row, every column
kept; recognised by content; linked to the runs of their models; HUD's metrics and gates."""

from __future__ import annotations

import csv
import io
import math
import shutil
from pathlib import Path

import pytest

from inductor_warehouse.ingest.discover import discover
from inductor_warehouse.ingest.parsers.harness import (FLOAT_COLUMNS, INT_COLUMNS, csv_kind, is_harness_csv,
                                                       is_harness_json, parse_harness_csv, parse_harness_json)
from inductor_warehouse.ingest.parsers.harness_names import file_fields as file_words

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
    # a name chosen with --output says nothing of the suite, backend, mode or dtype: a warning, NULLs
    assert [(p.severity, p.message.split(" unknown")[0]) for p in parsed.problems] == (
        [("warning", "suite, backend, mode, dtype")] if name == "inductor_single_test.csv" else [])
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
    assert file_words("speedup_inductor.csv") == dict.fromkeys(("suite", "mode", "dtype", "device", "backend")) | {
        "backend": "inductor"}


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


def test_damaged_rows_are_errors_never_values_and_the_rest_is_kept():
    """A value HUD or CI's gate reads that is no number, a row cut short or longer than its header, a
    row without a model: an error each, the row not stored (it can never be a model's latest value);
    a batch size that is no number (the harness writes a list for dynamic batches) is a warning."""
    text = ("dev,name,batch_size,speedup,abs_latency,graph_breaks\n"
            "cpu,good,2,1.5,3.0,0\n"
            "cpu,letters,2,fast,3.0,0\n"
            "cpu,fraction,2,1.1,3.0,0.5\n"
            "cpu,,2,1.1,3.0,0\n"
            "cpu,short,2\n"
            "cpu,long,2,1.1,3.0,0,7\n"
            'cuda,dynamic,"[(2, 256), (8, 1024)]",1.2,2.9,0\n')
    parsed = parse_harness_csv(text, "x_performance.csv")
    rows = {r["model"]: r for r in parsed.rows["harness_results"]}
    assert set(rows) == {"good", "dynamic"}
    assert rows["good"]["speedup"] == 1.5 and rows["dynamic"]["batch_size"] is None
    assert rows["dynamic"]["columns"]["batch_size"] == "[(2, 256), (8, 1024)]"
    messages = [(p.line, p.severity, p.message) for p in parsed.problems]
    assert (3, "error", "speedup 'fast' is not a number: damaged, not stored") in messages
    assert (4, "error", "graph_breaks '0.5' is not a whole number: damaged, not stored") in messages
    assert (5, "error", "row without a model name") in messages
    assert (6, "error", "3 fields where the header has 6: cut short, not stored") in messages
    assert (7, "error", "7 fields where the header has 6: written under another header, not stored") in messages
    assert (8, "warning", "batch_size '[(2, 256), (8, 1024)]' is not a whole number; stored NULL") in messages
    assert parse_harness_csv("", "x.csv").problems[0].message.startswith("no header")


def test_discovery_recognises_harness_files_by_content(tmp_path):
    (tmp_path / "results.csv").write_text((FIXTURES / "cpu-2.13-repvgg_a2-accuracy.csv").read_text())
    (tmp_path / "notes.csv").write_text("a,b\n1,2\n")
    found = discover([tmp_path])
    assert len(found.runs) == 1
    run = found.runs[0]
    assert [a.path.name for a in run.artifacts] == ["results.csv"] and run.artifacts[0].kind == "harness"
    assert found.skipped["unrecognised file"] == 1


# ---- the harness captures, ingested ----------------------------------------------------------------

PASSING = ("pass", "pass_due_to_skip", "eager_variation")


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    from tests.conftest import build_harness_warehouse

    root = tmp_path_factory.mktemp("harness")
    return build_harness_warehouse(root), root


def _query(db, name, **params):
    from inductor_warehouse.store.api import Warehouse

    with Warehouse(db) as wh:
        return wh.query(name, **params).to_dicts()


def _sql(db, text):
    from inductor_warehouse.store.api import Warehouse

    with Warehouse(db) as wh:
        return wh.sql(text).to_dicts()


def _csvs(root: Path):
    """Every harness CSV the captures hold, with the manifest of its folder (an independent walk:
    file names and Python's csv module)."""
    import json

    for path in sorted(root.rglob("*.csv")):
        manifest = json.loads((path.parent / "manifest.json").read_text()) if (path.parent / "manifest.json").exists() else {}
        yield path, manifest, dict_rows(path)


def test_every_csv_row_lands_once_and_links_to_the_compile_of_its_model(harness):
    db, root = harness
    expected = sum(len(rows) for _, _, rows in _csvs(root))
    rows = _sql(db, "SELECT h.model, h.kind, h.job, l.linked_run_id, r.model AS run_model, r.source_path "
                    "FROM harness_results h LEFT JOIN harness_links l USING (run_id, file, line) "
                    "LEFT JOIN runs r ON r.run_id = l.linked_run_id")
    assert len(rows) == expected
    compiled = [r for r in rows if r["kind"] != "expected"]
    assert len(compiled) == expected - 61
    for r in compiled:
        # each row of a model names exactly one compile of that model, in its job's folder
        assert r["linked_run_id"] is not None, r
        assert r["run_model"] == r["model"] and r["source_path"].startswith(r["job"])
    assert len({r["linked_run_id"] for r in compiled}) == 18  # every compile is some row's
    links = _sql(db, "SELECT run_id, file, line, count(*) AS n FROM harness_links GROUP BY ALL")
    assert max(x["n"] for x in links) == 1
    # the harness's own loop: one folder, three processes, each row its own process
    job = [r for r in compiled if r["job"].endswith("accuracy-job")]
    assert len(job) == 3 and len({r["linked_run_id"] for r in job}) == 3
    assert all(r["source_path"].endswith(".log") for r in job)


@pytest.mark.parametrize("manifest", [True, False])
def test_the_harness_loop_is_one_job_of_a_run_a_process_with_or_without_its_manifest(harness, tmp_path, manifest):
    """The harness's own loop (one folder, a process a model), as torchrun's ranks are: each process
    a run of its own named by its model, the CSVs' run beside them, all one job (`runs.job`: the
    folder); with no manifest to say so too."""
    from inductor_warehouse.ingest.load import ingest_paths

    _, root = harness
    job = tmp_path / "accuracy-job"
    shutil.copytree(root / "harness-timm" / "cpu-torch2.14.1" / "accuracy-job", job)
    if not manifest:
        (job / "manifest.json").unlink()
    logs = sorted((job / "trace").glob("*.log"))
    csv_path = job / "inductor_timm_models_float32_inference_cpu_accuracy.csv"
    models = {r["name"] for r in dict_rows(csv_path)}
    db = str(tmp_path / "wh.duckdb")
    summary = ingest_paths([job], db)
    assert (summary.runs, summary.replaced, summary.errors) == (len(logs) + 1, 0, 0) == (4, 0, 0)
    runs = _sql(db, "SELECT run_id, model, job, labels ->> 'job' AS label, source_path FROM runs")
    assert {r["job"] for r in runs} == {str(job)} and {r["label"] for r in runs} == {"accuracy-job"}
    processes = {r["source_path"]: r for r in runs if r["source_path"].endswith(".log")}
    assert sorted(processes) == [str(p) for p in logs]
    assert {r["model"] for r in processes.values()} == models
    holder = next(r for r in runs if r["source_path"] == str(csv_path))
    assert holder["model"] == ("timm_models_accuracy" if manifest else "timm_models")
    links = _sql(db, "SELECT h.model, r.model AS run_model, r.run_id FROM harness_results h "
                     "JOIN harness_links l USING (run_id, file, line) JOIN runs r ON r.run_id = l.linked_run_id")
    assert sorted(x["model"] for x in links) == sorted(models)
    assert all(x["model"] == x["run_model"] for x in links) and len({x["run_id"] for x in links}) == 3


def _by_hand(root: Path, key) -> dict:
    """HUD's summary computed from the CSVs and manifests alone: per (point, device), models' accuracy
    from *_accuracy.csv and speedup etc. from *_performance.csv."""
    groups: dict = {}
    for path, manifest, rows in _csvs(root):
        kind = "accuracy" if path.name.endswith("_accuracy.csv") else "performance" if path.name.endswith(
            "_performance.csv") else None
        if kind is None or "torch" not in manifest:
            continue
        point = key(manifest)
        for row in rows:
            g = groups.setdefault((point, row["dev"]), {})
            g.setdefault(row["name"], {})[kind] = row
    out = {}
    for group, models in groups.items():
        passed, speedups, latencies, ratios = 0, [], [], []
        # a job that ran one mode alone: without accuracy every model that ran counts and there is no
        # pass rate; without performance a model passes on its accuracy
        checked = any("accuracy" in rec for rec in models.values())
        timed = any("performance" in rec for rec in models.values())
        for rec in models.values():
            acc = rec.get("accuracy", {}).get("accuracy")
            perf = rec.get("performance", {})
            speedup = float(perf.get("speedup", 0) or 0)
            if (acc in PASSING and (speedup != 0 or not timed)) or acc == "pass_due_to_skip":
                passed += 1
            if acc in PASSING or not checked:
                if speedup > 0:
                    speedups.append(speedup)
                if float(perf.get("compilation_latency", 0) or 0) != 0:
                    latencies.append(float(perf["compilation_latency"]))
                if float(perf.get("compression_ratio", 0) or 0) != 0:
                    ratios.append(float(perf["compression_ratio"]))
        out[group] = {
            "models": len(models), "passed": passed if checked else None,
            "pass_rate": passed / len(models) if checked else None,
            "geomean_speedup": math.prod(speedups) ** (1 / len(speedups)) if speedups else None,
            "compilation_latency": sum(latencies) / len(latencies) if latencies else None,
            "compression_ratio": sum(ratios) / len(ratios) if ratios else None,
        }
    return out


@pytest.mark.parametrize("key", ["compiler", "variant"])
def test_hud_summary_equals_a_hand_computation_from_the_csvs(harness, key):
    db, root = harness
    hand = _by_hand(root, (lambda m: m["torch"]) if key == "compiler" else (lambda m: m.get("variant")))
    got = {(r["point"], r["device"]): r for r in _sql(db, f"SELECT * FROM harness_summary('{key}', NULL)")}
    if key == "compiler":
        # the GPU captures hold two Inductor configs of one release: the summary keeps them apart
        hand = {g: v for g, v in hand.items() if g[1] == "cpu"}
        got = {g: v for g, v in got.items() if g[1] == "cpu"}
        assert set(got) == {("2.13.0+cpu", "cpu"), ("2.14.1+cu130", "cpu")}
    else:
        hand = {g: v for g, v in hand.items() if g[1] == "cuda"}
        got = {g: v for g, v in got.items() if g[1] == "cuda"}
        assert set(got) == {("default", "cuda"), ("single_config", "cuda")}
    assert set(got) == set(hand)
    for group, want in hand.items():
        row = got[group]
        assert (row["workloads"], row["passed_workloads"]) == (want["models"], want["passed"]), group
        for metric in ("pass_rate", "geomean_speedup", "compilation_latency", "compression_ratio"):
            if want[metric] is None:
                assert row[metric] is None, (group, metric)
            else:
                assert row[metric] == pytest.approx(want[metric], rel=1e-9), (group, metric)


def test_hud_regression_rule(harness):
    db, _ = harness
    summary = {r["point"]: r for r in _sql(db, "SELECT * FROM harness_summary('compiler', NULL) WHERE device = 'cpu'")}
    base, head = summary["2.13.0+cpu"], summary["2.14.1+cu130"]
    rows = {r["metric"]: r for r in _query(db, "harness/hud_regression", base="2.13", head="2.14.1")}
    rules = {"pass_rate": (0.9, False), "geomean_speedup": (0.95, False), "compression_ratio": (0.95, False),
             "compilation_latency": (1.15, True)}
    assert set(rows) == set(rules)
    for metric, (threshold, lower_is_better) in rules.items():
        r = rows[metric]
        b, h = base[metric], head[metric]
        assert (r["base"], r["head"]) == (round(b, 4), round(h, 4))
        worse = h > b * threshold if lower_is_better else h < b * threshold
        assert r["verdict"] == ("regression" if worse else "no_regression"), metric
    # 2.14.1's compile took 87.5 s a model against 2.13's 58.1: past 1.15x, a regression
    assert rows["compilation_latency"]["verdict"] == "regression"
    # a side with no point is never a pass
    none = _query(db, "harness/hud_regression", base="2.13", head="2.99")
    assert {r["verdict"] for r in none} == {"insufficient_data"}
    # windows: the median of the baseline's points (here two releases) against the head's
    both = {r["metric"]: r for r in _query(db, "harness/hud_regression", base="2.13,2.14", head="2.14.1")}
    # 2.14.1 is named by both windows: it counts in the base, the first that names it
    assert both["compilation_latency"]["base_points"] == 2 and both["compilation_latency"]["head_points"] == 0
    assert both["compilation_latency"]["base"] == round((base["compilation_latency"] + head["compilation_latency"]) / 2, 4)
    assert both["compilation_latency"]["verdict"] == "insufficient_data"


def test_graph_break_gate_against_a_release_and_against_ci_expected_values(harness):
    db, root = harness
    gate = {r["model"]: r for r in _query(db, "harness/graph_break_gate", head="2.14.1", base="2.13")}
    acc = {}
    for path, manifest, rows in _csvs(root):
        if path.name.endswith("_accuracy.csv") and manifest.get("torch", "").startswith(("2.13", "2.14.1")):
            for row in rows:
                acc.setdefault(row["name"], {})[manifest["torch"][:4]] = row
    assert set(gate) == set(acc)
    for model, sides in acc.items():
        new, old = sides["2.14"], sides["2.13"]
        worse = [c for c, lower in (("graph_breaks", True), ("calls_captured", False), ("unique_graphs", False))
                 if (int(new[c]) > int(old[c]) if lower else int(new[c]) < int(old[c]))]
        assert gate[model]["status"] == ("FAIL" if worse else "PASS"), model
        assert gate[model]["expected_fallbacks_to_eager"] is None  # 2.13's harness did not count them
    ci = {r["model"]: r["status"] for r in _query(db, "harness/graph_break_gate", head="2.14.1")}
    # CI's file lists mobilenetv2_100 and repvgg_a2 with 0 graph breaks; deit_tiny is not in it
    assert ci == {"mobilenetv2_100": "PASS", "repvgg_a2": "PASS", "deit_tiny_patch16_224.fb_in1k": "MISSING"}


def test_a_regressed_counter_fails_the_gate(harness, tmp_path):
    """A head whose graph breaks rose and whose captured calls fell: FAIL, naming both."""
    from inductor_warehouse.ingest.load import ingest_paths

    db, root = harness
    job = root / "harness-timm" / "cpu-torch2.14.1" / "accuracy-job" / "inductor_timm_models_float32_inference_cpu_accuracy.csv"
    text = job.read_text().replace("cpu,repvgg_a2,2,pass,170,1,0,0,", "cpu,repvgg_a2,2,pass,160,1,0,3,")
    assert "160,1,0,3" in text
    worse = tmp_path / "worse"
    worse.mkdir()
    (worse / job.name).write_text(text)
    copy = str(tmp_path / "w.duckdb")
    shutil.copy(db, copy)
    ingest_paths([worse], copy, labels={"torch": "2.15.0"})
    gate = {r["model"]: r for r in _query(copy, "harness/graph_break_gate", head="2.15", base="2.14.1")}
    assert gate["repvgg_a2"]["status"] == "FAIL"
    assert gate["repvgg_a2"]["regressed"] == "graph_breaks=3, expected=0; calls_captured=160, expected=170"
    assert gate["mobilenetv2_100"]["status"] == "PASS"


def _chromium_phases(log: Path) -> dict[str, float]:
    """Seconds per span name, summed over the log's chromium spans (conftest.chromium_spans)."""
    from tests.conftest import chromium_spans

    totals: dict[str, float] = {}
    for span in chromium_spans(log):
        totals[span["name"]] = totals.get(span["name"], 0.0) + (span["e"] - span["b"]) / 1e6
    return totals


def test_compile_time_per_phase_is_every_span_of_the_trace(harness):
    db, root = harness
    for release, names in (("cpu-torch2.13", 52), ("cpu-torch2.14.1", 54)):
        folder = root / "harness-timm" / release / "performance" / "mobilenetv2_100"
        want = _chromium_phases(next((folder / "trace").glob("*.log")))
        got = {r["phase"]: r["seconds"] for r in _sql(
            db, f"SELECT p.phase, p.seconds FROM run_phase_times p JOIN runs r USING (run_id) "
                f"WHERE r.source_path = '{folder}'")}
        assert got.keys() == want.keys() and len(got) == names, release
        for phase, seconds in want.items():
            assert got[phase] == pytest.approx(seconds, abs=1e-6), phase
    series = _query(db, "compile/phase_series", model="mobilenetv2_100", phase="inductor_compile", workloads=10)
    # the performance and accuracy runs are series apart: workloads of their own
    assert {r["workload"] for r in series if r["device"] == "cpu"} == {
        f"mobilenetv2_100 [device=cpu harness={mode} mode=infer]" for mode in ("accuracy", "performance")}
    assert [r["compiler_version"] for r in series
            if r["workload"] == "mobilenetv2_100 [device=cpu harness=performance mode=infer]"] == [
        "2.13.0+cpu", "2.14.1+cu130"]


def _relabelled(src: Path, dest: Path, **values) -> Path:
    """A copy of a capture whose manifest says other values (labels spelled as zoo/ spells them, or
    another torch for a folder of harness files alone)."""
    import json

    shutil.copytree(src, dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest.update(values)
    (dest / "manifest.json").write_text(json.dumps(manifest))
    return dest


def test_the_harness_and_the_zoo_spell_one_workload(harness, tmp_path):
    """A capture labelled in the harness's words (mode=inference, dtype=float32) and one labelled in
    zoo/'s (mode=infer, dtype=fp32) are one workload: stored as written, keyed and paired as one, a
    selector in either spelling picks both, and the filters offer one value of each."""
    from inductor_warehouse.analysis.compare import compare
    from inductor_warehouse.analysis.selectors import parse_selector, select_runs
    from inductor_warehouse.ingest.load import ingest_paths
    from inductor_warehouse.store.api import Warehouse

    _, root = harness
    caps = root / "harness-timm"
    harness_words = _relabelled(caps / "cpu-torch2.13" / "performance" / "mobilenetv2_100", tmp_path / "a",
                                dtype="float32")
    zoo_words = _relabelled(caps / "cpu-torch2.14.1" / "performance" / "mobilenetv2_100", tmp_path / "b",
                            mode="infer", dtype="fp32")
    db = str(tmp_path / "w.duckdb")
    assert ingest_paths([harness_words, zoo_words], db).runs == 2
    rows = _sql(db, "SELECT labels ->> 'mode' AS mode, labels ->> 'dtype' AS dtype, workload FROM run_workloads "
                    "ORDER BY compiler_version")
    assert [(r["mode"], r["dtype"]) for r in rows] == [("inference", "float32"), ("infer", "fp32")]
    assert {r["workload"] for r in rows} == {"mobilenetv2_100 [device=cpu dtype=fp32 harness=performance mode=infer]"}
    with Warehouse(db) as wh:
        result = compare(wh.con, "compiler=2.13", "compiler=2.14.1")
        picked = {s: len(select_runs(wh.con, parse_selector(s)))
                  for s in ("mode=inference", "mode=infer", "dtype=float32", "dtype=fp32", "mode=training")}
    assert [p.workload for p in result.pairs] == ["mobilenetv2_100 [device=cpu dtype=fp32 harness=performance mode=infer]"]
    assert result.base_only == result.head_only == []
    assert picked == {"mode=inference": 2, "mode=infer": 2, "dtype=float32": 2, "dtype=fp32": 2, "mode=training": 0}
    assert _sql(db, "SELECT k, v, runs FROM label_value_runs WHERE k IN ('mode', 'dtype') ORDER BY k") == [
        {"k": "dtype", "v": "fp32", "runs": 2}, {"k": "mode", "v": "infer", "runs": 2}]


def test_migration_0015_keys_a_harness_labelled_run_again(harness, tmp_path):
    """A warehouse written before the one spelling keyed a run labelled mode=inference apart from the
    zoo's mode=infer: migration 0015 has its rollup made again, in the one spelling, and leaves every
    other rollup and the runs' tallies as they were."""
    import duckdb

    from inductor_warehouse.ingest.load import ingest_paths
    from inductor_warehouse.store.migrate import migrate
    from inductor_warehouse.store.opening import connect
    from tests.test_warehouse_tables import TALLIES, as_before

    _, root = harness
    caps = root / "harness-timm"
    db = str(tmp_path / "w.duckdb")
    ingest_paths([caps / "cpu-torch2.13" / "performance" / "mobilenetv2_100",
                  _relabelled(caps / "cpu-torch2.14.1" / "performance" / "mobilenetv2_100", tmp_path / "b",
                              mode="infer")], db)
    con = connect(db)
    rollups, tallies = con.execute("SELECT * FROM run_rollups ORDER BY run_id").fetchall(), con.execute(TALLIES).fetchall()
    assert len({r[-1] for r in con.execute("SELECT run_id, workload FROM run_workloads").fetchall()}) == 1
    old = con.execute("UPDATE run_rollups SET workload = 'mobilenetv2_100 [device=cpu mode=inference]' "
                      "WHERE run_id IN (SELECT run_id FROM runs WHERE labels ->> 'mode' = 'inference') "
                      "RETURNING run_id").fetchall()
    assert len(old) == 1
    as_before(con, "0034")  # which alters 0015's table: a warehouse without 0015 has neither
    as_before(con, "0015")
    con.close()
    con = duckdb.connect(db)
    try:
        assert [a[:4] for a in migrate(con)] == ["0015", "0034"]
        assert con.execute("SELECT * FROM run_rollups ORDER BY run_id").fetchall() == rollups
        assert con.execute(TALLIES).fetchall() == tallies
    finally:
        con.close()


def test_runs_of_harness_results_alone_are_no_workload(harness, tmp_path):
    """The runs that hold harness CSVs and nothing compiled (the 2.14.1 job's CSV, CI's expected CSV)
    are harness_holders; with a 2.13 copy of the job's CSV folder both sides have one, which compare
    used to pair as a workload of 0 graphs: never a compiled workload, their rows are the harness's
    workloads (the 2.14.1 job's rows measured compiled runs, and are judged there; the copy's have no
    counterpart on the head side); a selector of holders with a model none of their rows has is an
    error; changes makes no series of them."""
    from inductor_warehouse.analysis.changes import changes
    from inductor_warehouse.analysis.compare import compare
    from inductor_warehouse.analysis.selectors import SelectorError
    from inductor_warehouse.ingest.load import ingest_paths
    from inductor_warehouse.store.api import Warehouse

    db, root = harness
    copy = str(tmp_path / "w.duckdb")
    shutil.copy(db, copy)
    job = root / "harness-timm" / "cpu-torch2.14.1" / "accuracy-job"
    folder = tmp_path / "job-2.13"
    folder.mkdir()
    for f in job.iterdir():  # the job's own files: its processes' logs and debug trees are runs of their own
        if f.is_file() and f.suffix in (".csv", ".json"):
            shutil.copy(f, folder / f.name)
    _relabelled(folder, tmp_path / "job213", torch="2.13.0+cpu")
    assert ingest_paths([tmp_path / "job213"], copy).runs == 1
    holders = _sql(copy, "SELECT r.model, r.compiler_version, m.graphs FROM harness_holders JOIN runs r USING (run_id) "
                         "JOIN run_metrics m USING (run_id) ORDER BY ALL")
    # they hold no file a graph is read from: their graphs are unknown, not 0
    assert holders == [{"model": "timm_models", "compiler_version": None, "graphs": None},
                       {"model": "timm_models_accuracy", "compiler_version": "2.13.0+cpu", "graphs": None},
                       {"model": "timm_models_accuracy", "compiler_version": "2.14.1+cu130", "graphs": None}]
    with Warehouse(copy) as wh:
        result = compare(wh.con, "compiler=2.13", "compiler=2.14.1")
        # each model's accuracy and performance runs: two workloads
        assert sorted((p.model, p.config["harness"]) for p in result.pairs) == [
            (m, mode) for m in ("deit_tiny_patch16_224.fb_in1k", "mobilenetv2_100", "repvgg_a2")
            for mode in ("accuracy", "performance")]
        assert result.head_only == [] and result.base_only == [
            f"{m} [backend=inductor device=cpu dtype=fp32 harness=accuracy mode=infer suite=timm_models]"
            for m in ("deit_tiny_patch16_224.fb_in1k", "mobilenetv2_100", "repvgg_a2")]
        with pytest.raises(SelectorError, match="picks no run of model timm_models_accuracy"):
            compare(wh.con, "compiler=2.13", "compiler=2.14.1", model="timm_models_accuracy")
        assert changes(wh.con, "timm_models_accuracy").series == {}


def test_the_gate_reads_the_newest_release_of_a_family(harness, tmp_path):
    """`head=2.14` names 2.14.0 and 2.14.1: each workload's latest accuracy row is 2.14.1's (the newest
    release, release_order), not that of a 2.14.0 job captured later, whose repvgg_a2 broke its graph
    three times; its rows carry their workload, spelled as every workload is."""
    from inductor_warehouse.ingest.load import ingest_paths

    db, root = harness
    copy = str(tmp_path / "w.duckdb")
    shutil.copy(db, copy)
    job = root / "harness-timm" / "cpu-torch2.14.1" / "accuracy-job"
    folder = tmp_path / "job"
    folder.mkdir()
    for f in job.iterdir():
        if f.is_file() and f.suffix in (".csv", ".json"):
            shutil.copy(f, folder / f.name)
    csv_path = folder / "inductor_timm_models_float32_inference_cpu_accuracy.csv"
    csv_path.write_text(csv_path.read_text().replace("cpu,repvgg_a2,2,pass,170,1,0,0,", "cpu,repvgg_a2,2,pass,170,1,0,3,"))
    later = _relabelled(folder, tmp_path / "job-2.14.0", torch="2.14.0", started_at="2026-12-01T00:00:00+00:00")
    assert ingest_paths([later], copy).runs == 1
    gate = {r["model"]: r for r in _query(copy, "harness/graph_break_gate", head="2.14", base="2.13")}
    assert {m: r["status"] for m, r in gate.items()} == {
        "deit_tiny_patch16_224.fb_in1k": "PASS", "mobilenetv2_100": "PASS", "repvgg_a2": "PASS"}
    assert gate["repvgg_a2"]["workload"] == "repvgg_a2 [device=cpu dtype=fp32 mode=infer]"
    assert _query(copy, "harness/graph_break_gate", head="2.14.0", base="2.13")[0]["status"] == "FAIL"


def _unlabelled(src: Path, dest: Path) -> Path:
    """A copy of a capture whose manifest does not say the harness's mode (`harness` label), as a
    team's own harness job would not."""
    import json

    shutil.copytree(src, dest)
    manifest = dest / "manifest.json"
    if manifest.exists():
        values = json.loads(manifest.read_text())
        values.pop("harness", None)
        manifest.write_text(json.dumps(values))
    return dest


def test_accuracy_and_performance_runs_of_a_model_are_two_workloads(harness, tmp_path):
    """Unlabelled, a harness process is told performance or accuracy by the CSVs beside it: its own
    (one model a capture), its job's (the harness's loop, one CSV for all processes), and, where one
    folder holds both kinds, by its Inductor config (the harness sets fallback_random in accuracy runs
    only: read here straight from each trace's compilation_metrics); each CSV row links to the process
    of its own mode, and compare pairs accuracy with accuracy, performance with performance."""
    import json

    from inductor_warehouse.analysis.compare import compare
    from inductor_warehouse.ingest.load import ingest_paths
    from inductor_warehouse.store.api import Warehouse

    _, root = harness
    caps = root / "harness-timm"
    one = tmp_path / "one"
    for mode in ("performance", "accuracy"):
        _unlabelled(caps / "cpu-torch2.13" / mode / "repvgg_a2", one / mode)
    job = _unlabelled(caps / "cpu-torch2.14.1" / "accuracy-job", tmp_path / "job")
    # one folder for a whole nightly: both CSVs and both processes' traces of mobilenetv2_100
    both = tmp_path / "both"
    (both / "trace").mkdir(parents=True)
    fallback_random = {}
    for mode in ("performance", "accuracy"):
        src = caps / "cpu-torch2.13" / mode / "mobilenetv2_100"
        shutil.copy(src / f"inductor_timm_models_float32_inference_cpu_{mode}.csv", both)
        log = next((src / "trace").glob("*.log"))
        shutil.copy(log, both / "trace" / log.name)
        text = log.read_text()
        fallback_random[log.name] = '\\"fallback_random\\": true' in text or '"fallback_random": true' in text
    assert sorted(fallback_random.values()) == [False, True]
    db = str(tmp_path / "w.duckdb")
    summary = ingest_paths([one, job, both], db)
    assert summary.errors == 0
    runs = _sql(db, "SELECT r.run_id, r.source_path, r.labels ->> 'harness' AS harness, w.workload FROM runs r "
                    "JOIN run_workloads w USING (run_id) WHERE r.run_id NOT IN (SELECT run_id FROM harness_holders)")
    assert len(runs) == 2 + 3 + 2
    for r in runs:
        path = r["source_path"]
        if path.startswith(str(one)):
            want = "performance" if "/performance" in path else "accuracy"
        elif path.startswith(str(job)):
            want = json.loads((caps / "cpu-torch2.14.1" / "accuracy-job" / "manifest.json").read_text())["harness"]
        else:
            want = "accuracy" if fallback_random[Path(path).name] else "performance"
        assert r["harness"] == want, r
        assert f"harness={want}" in r["workload"]
    # each row links to the run of its mode, even in the folder of both
    links = _sql(db, "SELECT h.kind, r.labels ->> 'harness' AS mode FROM harness_results h "
                     "JOIN harness_links l USING (run_id, file, line) JOIN runs r ON r.run_id = l.linked_run_id")
    # (the compilation-metrics CSV is the performance run's)
    assert len(links) == 3 + 3 + 2
    assert all(x["mode"] == ("performance" if x["kind"] == "compile_times" else x["kind"]) for x in links)
    with Warehouse(db) as wh:
        result = compare(wh.con, "compiler=2.13", "compiler=2.14.1", model="repvgg_a2")
        alone = compare(wh.con, "compiler=2.13", "compiler=2.13", model="mobilenetv2_100")
    # 2.13's repvgg_a2 ran both modes, 2.14.1's loop accuracy only: the accuracy runs pair
    assert [p.config.get("harness") for p in result.pairs] == ["accuracy"]
    assert result.base_only == ["repvgg_a2 [harness=performance]"]
    assert {p.workload for p in alone.pairs} == {f"mobilenetv2_100 [device=cpu harness={m}]"
                                                 for m in ("accuracy", "performance")}


def test_migration_0016_keys_a_harness_process_by_its_mode_again(harness, tmp_path):
    """A warehouse written before the harness's mode was part of the workload keyed a model's accuracy
    and performance runs as one workload: migration 0016 has their rollups made again, apart, and
    leaves every other rollup and the runs' tallies as they were."""
    import duckdb

    from inductor_warehouse.ingest.load import ingest_paths
    from inductor_warehouse.store.migrate import migrate
    from inductor_warehouse.store.opening import connect
    from tests.conftest import FIXTURES
    from tests.test_warehouse_tables import TALLIES, as_before

    _, root = harness
    caps = root / "harness-timm"
    db = str(tmp_path / "w.duckdb")
    ingest_paths([caps / "cpu-torch2.13" / mode / "repvgg_a2" for mode in ("performance", "accuracy")]
                 + [FIXTURES / "runs" / "cpu-torch2.13"], db)
    con = connect(db)
    rollups, tallies = con.execute("SELECT * FROM run_rollups ORDER BY run_id").fetchall(), con.execute(TALLIES).fetchall()
    keys = {r[0] for r in con.execute("SELECT workload FROM run_workloads WHERE model = 'repvgg_a2'").fetchall()}
    assert keys == {f"repvgg_a2 [device=cpu harness={m} mode=infer]" for m in ("accuracy", "performance")}
    old = con.execute("UPDATE run_rollups SET workload = 'repvgg_a2 [device=cpu mode=infer]' "
                      "WHERE run_id IN (SELECT run_id FROM runs WHERE model = 'repvgg_a2') RETURNING run_id").fetchall()
    assert len(old) == 2
    as_before(con, "0016")
    con.close()
    con = duckdb.connect(db)
    try:
        assert [a[:4] for a in migrate(con)] == ["0016"]
        assert con.execute("SELECT * FROM run_rollups ORDER BY run_id").fetchall() == rollups
        assert con.execute(TALLIES).fetchall() == tallies
    finally:
        con.close()


def test_runs_and_the_overview_tell_harness_result_runs_apart(harness):
    """`iwh runs` says which runs hold harness results alone (kind, no workload) and the Overview
    counts them apart: runs are the compiles, one a trace log of the captures."""
    db, root = harness
    logs = list((root / "harness-timm").rglob("dedicated_log_torch_trace_*.log"))
    listed = _query(db, "overview/runs")
    holders = [r for r in listed if r["kind"] == "harness results"]
    assert len(listed) == len(logs) + 2 == 20
    # the 2.14.1 loop's CSV (held beside its 3 processes) and CI's expected values
    assert sorted(r["model"] for r in holders) == ["timm_models", "timm_models_accuracy"]
    # they compiled nothing the warehouse can see: graphs and kernels unknown, not 0 (kernels_unseen)
    assert all(r["workload"] is None and r["graphs"] is None and r["kernels"] is None for r in holders)
    assert all(r["kind"] == "compile" and r["workload"] for r in listed if r not in holders)
    counts = _query(db, "dashboard/overview_counts")[0]
    assert (counts["runs"], counts["harness_result_runs"], counts["models"]) == (len(logs), 2, 3)
    # workloads: each model's device, Inductor config (variant, GPU only) and harness mode, read off
    # the folders (the release is no part of a workload); the loop's folder holds its CSV's models
    job_models = [r["name"] for r in dict_rows(next((root / "harness-timm" / "cpu-torch2.14.1" / "accuracy-job")
                                                    .glob("*_accuracy.csv")))]
    workloads = set()
    for log in logs:
        parts = log.relative_to(root / "harness-timm").parts
        if parts[0].startswith("gpu"):
            workloads.add(("cuda", parts[1], parts[2], parts[3]))
        elif parts[1] == "accuracy-job":
            workloads |= {("cpu", None, "accuracy", m) for m in job_models}
        else:
            workloads.add(("cpu", None, parts[1], parts[2]))
    assert counts["workloads"] == len(workloads) == 12


def test_changes_lists_the_compile_phases_that_moved_between_releases(harness):
    """`iwh changes` says where a compile phase's time moved by 30% and half a second from one release to
    the next, for each workload apart: each phase's seconds summed from the trace's chromium spans here,
    by hand. One run a side is not judged: one line a point names the phase that moved most."""
    from inductor_warehouse.analysis.changes import NOT_JUDGED, PHASE, changes
    from inductor_warehouse.store.api import Warehouse

    db, root = harness
    model = "mobilenetv2_100"
    want = {}
    for mode in ("performance", "accuracy"):
        old = _chromium_phases(next((root / "harness-timm" / "cpu-torch2.13" / mode / model / "trace").glob("*.log")))
        new_root = root / "harness-timm" / "cpu-torch2.14.1" / ("performance" if mode == "performance" else "accuracy-job")
        logs = new_root.rglob("*.log") if mode == "performance" else (new_root / "trace").glob("*.log")
        new = next(p for log in logs if (p := _chromium_phases(log)) and _log_model(log) == model)
        want[mode] = {ph: (old[ph], new[ph]) for ph in old.keys() & new.keys()
                      if abs(new[ph] - old[ph]) >= 0.5 and abs(new[ph] - old[ph]) >= 0.3 * old[ph]}
    assert want["performance"] and want["accuracy"]
    with Warehouse(db) as wh:
        report = changes(wh.con, model, metrics=(PHASE,))
        codegen = changes(wh.con, model, metrics=(PHASE,), phase="codegen")
    got: dict = {}
    for p in report.points:
        mode = "performance" if "harness=performance" in p.series else "accuracy"
        assert "device=cpu" in p.series and (p.before_at, p.after_at) == ("2.13.0+cpu", "2.14.1+cu130")
        (c,) = p.changes  # one run a side: one line, not judged
        assert not c.judged and c.detail.startswith(f"{NOT_JUDGED}: ") and "(median of 1 and 1 runs)" in c.detail
        got[mode] = (c.detail.removeprefix(f"{NOT_JUDGED}: ").split(":")[0], c.before, c.after)
    assert got.keys() == want.keys()
    for mode, (phase, b, h) in got.items():
        assert phase in want[mode], mode
        assert (b, h) == (pytest.approx(want[mode][phase][0], abs=1e-6), pytest.approx(want[mode][phase][1], abs=1e-6))
    shown = {c.detail.removeprefix(f"{NOT_JUDGED}: ").split(":")[0] for p in codegen.points for c in p.changes}
    assert shown <= {ph for phases in want.values() for ph in phases if "codegen" in ph}


def _log_model(log: Path) -> str | None:
    """The model a harness process compiled: its output code's `compiled_module_main('<model>')`."""
    import re

    m = re.search(r"compiled_module_main\('([^']+)'", log.read_text())
    return m.group(1) if m else None


def test_the_summary_counts_no_unknown_kernels_for_runs_of_results_alone(tmp_path):
    """A run of a harness CSV alone compiled nothing: its kernel count is no unknown the ingest summary
    warns of, though its rollup has none (NULL, never 0)."""
    from inductor_warehouse.ingest.load import ingest_paths
    from inductor_warehouse.store.api import Warehouse

    db = str(tmp_path / "w.duckdb")
    summary = ingest_paths([str(FIXTURES / "real" / "azhao20")], db)
    assert summary.runs == 1 and summary.kernels == 0
    with Warehouse(db) as wh:
        assert wh.sql("SELECT kernel_count FROM run_rollups")["kernel_count"].to_list() == [None]
    assert summary.kernels_unknown == 0 and "unknown" not in summary.line()
