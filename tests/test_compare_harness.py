"""`iwh compare` on the benchmark harness's numbers: each workload's accuracy, speedup, compilation
latency and compression ratio from the harness rows that measured its runs, gated with HUD's
thresholds under the house's rule for noisy numbers, and HUD's suite numbers of each side; checked
against the CSVs read here with Python's csv module."""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import IWH, build_harness_warehouse, unpack_harness_repeats

PASSING = {"pass", "pass_due_to_skip", "eager_variation"}
# HUD's thresholds, as fractions of the base: speedup and compression ratio below 0.95x, compilation
# latency above 1.15x
LIMITS = {"speedup": 0.05, "compression_ratio": 0.05, "compilation_latency": 0.15}


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    from inductor_warehouse.ingest.load import ingest_paths

    root = tmp_path_factory.mktemp("compare_harness")
    db = build_harness_warehouse(root)
    assert ingest_paths([unpack_harness_repeats(root)], db).runs == 4
    return db, root


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _samples(root: Path, release: str) -> dict[tuple[str, str], list[dict]]:
    """(model, performance|accuracy) -> the CSV rows of the CPU captures of `release`, each with the
    capture's start (its manifest's), read from the folders alone."""
    out: dict[tuple[str, str], list[dict]] = {}
    for top in ("harness-timm", "harness-timm-repeats"):
        for path in sorted((root / top / f"cpu-torch{release}").rglob("*.csv")):
            kind = path.stem.rsplit("_", 1)[-1]
            if kind not in ("performance", "accuracy"):
                continue
            manifest = json.loads((path.parent / "manifest.json").read_text())
            for row in _rows(path):
                out.setdefault((row["name"], kind), []).append(row | {"started_at": manifest["started_at"]})
    return out


def _lower_median(values: list[float]) -> float:
    s = sorted(values)
    return s[(len(s) - 1) // 2]


def _verdict(metric: str, base: list[float], head: list[float]) -> tuple[str, float, float]:
    """The house's rule for a measured number, written out: one sample a side decides nothing; with
    two or three the minimum of a time, the median of a ratio, against HUD's threshold."""
    pick = min if metric == "compilation_latency" else _lower_median
    b, h = pick(base), pick(head)
    if min(len(base), len(head)) < 2:
        return "insufficient data", b, h
    if abs(h - b) <= LIMITS[metric] * b:
        return "within threshold", b, h
    worse = h > b if metric == "compilation_latency" else h < b
    return ("regression" if worse else "improvement"), b, h


def test_each_workload_gates_on_the_harness_numbers_of_its_runs(harness):
    from inductor_warehouse.analysis.compare import compare
    from inductor_warehouse.store.api import Warehouse

    db, root = harness
    base, head = _samples(root, "2.13"), _samples(root, "2.14.1")
    with Warehouse(db) as wh:
        result = compare(wh.con, "compiler=2.13", "compiler=2.14.1")
    pairs = {(p.model, p.config["harness"]): p for p in result.pairs}
    assert set(pairs) == set(base) == set(head)
    assert len(base[("mobilenetv2_100", "performance")]) == 3  # the repeats: three samples a side
    for key, pair in pairs.items():
        m = pair.metrics
        if key[1] == "accuracy":
            assert (m["accuracy"].base, m["accuracy"].head) == (base[key][0]["accuracy"], head[key][0]["accuracy"])
            assert m["accuracy"].verdict == "unchanged"  # every accuracy check passed
            assert m["speedup"].verdict == m["compression_ratio"].verdict == "n/a"
            continue
        assert m["accuracy"].verdict == "n/a"
        for metric in LIMITS:
            verdict, b, h = _verdict(metric, [float(r[metric]) for r in base[key]],
                                     [float(r[metric]) for r in head[key]])
            assert (m[metric].base, m[metric].head) == (pytest.approx(b), pytest.approx(h)), (key, metric)
            assert m[metric].verdict == verdict, (key, metric)
    # three samples a side: min-of-N says 2.14.1 compiles mobilenetv2_100 faster (42.7 s -> 31.6 s),
    # the median speedup doubled; one sample of the others decides nothing
    mobilenet = pairs[("mobilenetv2_100", "performance")].metrics
    assert (mobilenet["compilation_latency"].verdict, mobilenet["compilation_latency"].how) == (
        "improvement", "min-of-N, n=3/3")
    assert mobilenet["speedup"].how == "median-of-N, n=3/3"
    assert pairs[("repvgg_a2", "performance")].metrics["speedup"].verdict == "insufficient data"


def _one_rule(metric: str, values: list[float]) -> float:
    """Each harness metric's one rule across a workload's samples, written out: the min of a latency,
    the lower median of a ratio, a speedup 0 when any sample failed to run."""
    if metric == "compilation_latency":
        return min(values)
    if metric == "speedup" and 0 in values:
        return 0.0
    return _lower_median(values)


def test_hud_suite_numbers_of_each_side_equal_a_hand_computation(harness):
    """HUD's numbers of a side over each workload's samples by the metric's one rule (the median of
    three speedups, the least of three compilation latencies), pass when the accuracy passes and the
    speedup is not 0; geomean speedup and mean compilation latency and compression ratio over the
    passing ones; judged by HUD's rule, which gates: the pass rate exactly, a measured number only
    where each workload of it has two samples or more a side (two of the three models ran once a
    release here: insufficient data, as their own rows say)."""
    from inductor_warehouse.analysis.compare import compare
    from inductor_warehouse.store.api import Warehouse

    db, root = harness
    with Warehouse(db) as wh:
        result = compare(wh.con, "compiler=2.13", "compiler=2.14.1")
    got = {(r.metric): r for r in result.hud}
    assert {r.suite for r in result.hud} == {"timm_models"} and len(result.hud) == 4
    sides = {}
    for side, release in (("base", "2.13"), ("head", "2.14.1")):
        samples = _samples(root, release)
        models = {m for m, _ in samples}
        passed, speedups, latencies, ratios = 0, [], [], []
        for model in models:
            acc = samples[(model, "accuracy")][0]["accuracy"]
            perf = {m: _one_rule(m, [float(r[m]) for r in samples[(model, "performance")]])
                    for m in ("speedup", "compilation_latency", "compression_ratio")}
            if acc in PASSING and perf["speedup"] != 0:
                passed += 1
                speedups.append(perf["speedup"])
                latencies.append(perf["compilation_latency"])
                ratios.append(perf["compression_ratio"])
        fewest = min(len(samples[(model, "performance")]) for model in models)
        sides[side] = {"fewest": fewest, "pass_rate": passed / len(models),
                       "geomean_speedup": math.prod(speedups) ** (1 / len(speedups)),
                       "compilation_latency": sum(latencies) / len(latencies),
                       "compression_ratio": sum(ratios) / len(ratios), "workloads": len(models)}
    hud_regressions = set()
    for metric, row in got.items():
        assert row.base == pytest.approx(sides["base"][metric], rel=1e-9), metric
        assert row.head == pytest.approx(sides["head"][metric], rel=1e-9), metric
        assert (row.base_workloads, row.head_workloads) == (3, 3)
        b, h = sides["base"][metric], sides["head"][metric]
        limit = 0.10 if metric == "pass_rate" else LIMITS["speedup" if metric == "geomean_speedup" else metric]
        worse = h > b if metric == "compilation_latency" else h < b
        want = "unchanged" if b == h else "within threshold" if abs(h - b) <= limit * b else \
            "regression" if worse else "improvement"
        if metric != "pass_rate":
            assert row.how == f"n={sides['base']['fewest']}/{sides['head']['fewest']}" == "n=1/1"
            want = "insufficient data"
        assert row.verdict == want, metric
        if want == "regression":
            hud_regressions.add(metric)
    # HUD's suite rule gates: its regressions are the result's
    assert {m for _, m in result.regressions if m in got} == hud_regressions


def test_one_output_never_shows_opposite_verdicts_for_one_metric(harness):
    """mobilenetv2_100 alone, three runs a release: the per-workload speedup and HUD's geomean over
    that one workload are the same numbers (the median of three), so their verdicts cannot point
    opposite ways (before: 3.567 -> 2.529, a 29% regression, beside 1.252 -> 2.529, +102%)."""
    from inductor_warehouse.analysis.compare import compare
    from inductor_warehouse.store.api import Warehouse

    db, root = harness
    with Warehouse(db) as wh:
        result = compare(wh.con, "compiler=2.13", "compiler=2.14.1", model="mobilenetv2_100")
    perf = next(p for p in result.pairs if p.config.get("harness") == "performance").metrics
    hud = {r.metric: r for r in result.hud}
    base = [float(r["speedup"]) for r in _samples(root, "2.13")[("mobilenetv2_100", "performance")]]
    head = [float(r["speedup"]) for r in _samples(root, "2.14.1")[("mobilenetv2_100", "performance")]]
    assert (perf["speedup"].base, perf["speedup"].head) == (_lower_median(base), _lower_median(head))
    assert (hud["geomean_speedup"].base, hud["geomean_speedup"].head) == (
        pytest.approx(perf["speedup"].base), pytest.approx(perf["speedup"].head))
    assert perf["speedup"].verdict == hud["geomean_speedup"].verdict == "improvement"
    latency = [min(float(r["compilation_latency"]) for r in _samples(root, v)[("mobilenetv2_100", "performance")])
               for v in ("2.13", "2.14.1")]
    assert (hud["compilation_latency"].base, hud["compilation_latency"].head) == tuple(pytest.approx(x) for x in latency)
    assert perf["compilation_latency"].verdict == hud["compilation_latency"].verdict == "improvement"


def _nightlies(root: Path, dest: Path, edit) -> Path:
    """Two nightlies of repvgg_a2 under 2.13 (its accuracy and performance captures, labelled
    nightly=1 and nightly=2): the second with its CSVs edited by `edit(kind, text)`."""
    for night in ("1", "2"):
        for kind in ("accuracy", "performance"):
            folder = dest / night / kind
            shutil.copytree(root / "harness-timm" / "cpu-torch2.13" / kind / "repvgg_a2", folder)
            manifest = json.loads((folder / "manifest.json").read_text())
            (folder / "manifest.json").write_text(json.dumps(manifest | {"nightly": night}))
            if night == "2":
                path = folder / f"inductor_timm_models_float32_inference_cpu_{kind}.csv"
                text = path.read_text()
                path.write_text(edit(kind, text))
                assert path.read_text() != text
    return dest


def _fail(kind: str, text: str) -> str:
    """The accuracy check now fails; the performance run failed to run (speedup 0, as the harness
    writes a model it could not run)."""
    header, row = text.splitlines()[:2]
    fields = row.split(",")
    column = header.split(",").index("accuracy" if kind == "accuracy" else "speedup")
    fields[column] = "fail_accuracy" if kind == "accuracy" else "0.000000"
    return "\n".join([header, ",".join(fields)]) + "\n"


def test_a_failed_accuracy_check_or_run_is_a_regression_at_once(harness, tmp_path):
    """One sample a side is enough for the deterministic gates: accuracy pass -> fail_accuracy, and a
    speedup of 0 (the model did not run); `--fail-on regression` exits 1 naming them, and
    `--threshold METRIC=off` reports them instead."""
    from inductor_warehouse.ingest.load import ingest_paths

    _, root = harness
    db = str(tmp_path / "w.duckdb")
    assert ingest_paths([_nightlies(root, tmp_path / "nightly", _fail)], db).errors == 0

    def iwh(*args):
        return subprocess.run([*IWH, "--db", db, "compare", "--base", "nightly=1", "--head", "nightly=2", *args],
                              capture_output=True, text=True, timeout=120)

    out = iwh("--fail-on", "regression", "--format", "json")
    assert out.returncode == 1, out.stderr
    # and HUD's suite rule: the pass rate fell from 1 to 0
    assert ("3 regressions: repvgg_a2 [harness=accuracy] accuracy, repvgg_a2 [harness=performance] speedup, "
            "timm_models [mode=infer dtype=fp32 backend=inductor device=cpu] pass_rate") in out.stderr
    pairs = {p["config"]["harness"]: p["metrics"] for p in json.loads(out.stdout)["pairs"]}
    acc = pairs["accuracy"]["accuracy"]
    assert (acc["base"], acc["head"], acc["verdict"], acc["how"]) == ("pass", "fail_accuracy", "regression", "exact")
    assert pairs["performance"]["speedup"]["verdict"] == "regression"
    assert pairs["performance"]["speedup"]["how"] == "head failed to run (0)"
    assert pairs["performance"]["speedup"]["head"] == 0
    # HUD's pass rate of the suite fell from 1 to 0: one model, failing both ways
    hud = {r["metric"]: r for r in json.loads(out.stdout)["hud"]}
    assert (hud["pass_rate"]["base"], hud["pass_rate"]["head"], hud["pass_rate"]["verdict"]) == (1, 0, "regression")
    off = iwh("--fail-on", "regression", "--threshold", "accuracy=off", "--threshold", "speedup=off",
              "--threshold", "pass_rate=off")
    assert off.returncode == 0, off.stderr
    assert re.search(r"\[harness=accuracy\] +accuracy +pass +fail_accuracy +reported", off.stdout)


def test_thresholds_move_with_the_threshold_option(harness):
    """`--threshold compilation_latency=30%`: mobilenetv2_100's 26% faster compile is within it."""
    from inductor_warehouse.analysis import regress
    from inductor_warehouse.analysis.compare import compare
    from inductor_warehouse.store.api import Warehouse

    db, _ = harness
    with Warehouse(db) as wh:
        default = compare(wh.con, "compiler=2.13", "compiler=2.14.1", model="mobilenetv2_100")
        wide = compare(wh.con, "compiler=2.13", "compiler=2.14.1", model="mobilenetv2_100",
                       rules=regress.parse_thresholds(["compilation_latency=30%"]))
    perf = [p for p in default.pairs if p.config["harness"] == "performance"][0].metrics["compilation_latency"]
    assert perf.verdict == "improvement" and -30 < perf.pct < -15
    assert [p for p in wide.pairs if p.config["harness"] == "performance"][0].metrics[
        "compilation_latency"].verdict == "within threshold"


def test_markdown_and_text_show_the_harness_numbers(harness):
    from inductor_warehouse.analysis.compare import compare
    from inductor_warehouse.analysis.render import render
    from inductor_warehouse.store.api import Warehouse

    db, _ = harness
    with Warehouse(db) as wh:
        result = compare(wh.con, "compiler=2.13", "compiler=2.14.1", model="mobilenetv2_100")
    text, md = render(result, "table"), render(result, "markdown")
    for shown in (text, md):
        assert "HUD's suite numbers" in shown
        for metric in ("pass_rate", "geomean_speedup", "compilation_latency", "compression_ratio", "speedup"):
            assert metric in shown
    assert "| mobilenetv2_100 [harness=performance] | compilation_latency | 42.72 | 31.61 |" in md


def test_changes_lists_where_hud_flags_a_models_harness_numbers(harness, tmp_path):
    """`iwh changes --metric harness` over two nightlies of repvgg_a2: the second failed its accuracy
    check and could not run (speedup 0): a change point with both, by HUD's per-model flags, on the
    numbers compare and HUD's summary take (one sample a night)."""
    from inductor_warehouse.ingest.load import ingest_paths

    _, root = harness
    db = str(tmp_path / "w.duckdb")
    assert ingest_paths([_nightlies(root, tmp_path / "nightly", _fail)], db).errors == 0
    out = subprocess.run([*IWH, "--db", db, "changes", "--model", "repvgg_a2", "--series", "nightly", "--metric",
                          "harness", "--format", "json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    accuracy, performance = (_rows(next((root / "harness-timm" / "cpu-torch2.13" / kind / "repvgg_a2").glob("*.csv")))[0]
                             for kind in ("accuracy", "performance"))
    got = {r["detail"]: (r["before_value"], r["after_value"], r["before"], r["after"]) for r in rows}
    assert got == {"accuracy: HUD regression": (accuracy["accuracy"], "fail_accuracy", "1", "2"),
                   "speedup: HUD regression": (str(float(performance["speedup"])), "0.0", "1", "2")}
    assert all(r["metric"] == "harness" and "suite=timm_models backend=inductor" in r["series"] for r in rows)
