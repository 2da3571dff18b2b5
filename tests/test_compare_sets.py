"""`iwh compare` on two sets of harness results alone (a CI job's or a nightly's CSVs, nothing
compiled beside them): model by model and HUD's suite numbers, with HUD's rules; exit status 0 when
nothing regressed (a set against another holding the same data), 1 on a regression, 2 on a usage or
data error. The sets are real CSVs (tests/fixtures/harness/real/azhao20: 25 HuggingFace models),
the regression made here by editing speedups, and judged here by hand."""

from __future__ import annotations

import csv
import json
import math
import subprocess
from pathlib import Path

import pytest

from tests.conftest import IWH

REAL = Path(__file__).parent / "fixtures" / "harness" / "real"
CSV = REAL / "azhao20" / "speedup_inductor.csv"
ACC = REAL / "laurentdupin" / "accuracy_inductor.csv"


def _set(root: Path, name: str, text: str, **labels) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "speedup_inductor.csv").write_text(text)
    (folder / "manifest.json").write_text(json.dumps({"suite": "huggingface", "mode": "training", "dtype": "amp",
                                                      **labels}))
    return folder


def _slower(text: str, factor: float, models: int) -> str:
    """The first `models` models' speedups times `factor`."""
    lines = text.splitlines()
    head = lines[0].split(",")
    at = head.index("speedup")
    out = [lines[0]]
    for i, line in enumerate(lines[1:]):
        fields = line.split(",")
        if i < models and float(fields[at]) > 0:
            fields[at] = f"{float(fields[at]) * factor:.6f}"
        out.append(",".join(fields))
    return "\n".join(out) + "\n"


def _geomean(text: str) -> float:
    speedups = [float(r["speedup"]) for r in csv.DictReader(text.splitlines()) if float(r["speedup"]) > 0]
    return math.prod(speedups) ** (1 / len(speedups))


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    from inductor_warehouse.ingest.load import ingest_paths

    root = tmp_path_factory.mktemp("sets")
    text = CSV.read_text()
    slower = _slower(text, 0.8, 10)
    folders = [_set(root, "a", text, nightly="2024-01-01"),
               _set(root, "b", text, nightly="2024-01-02"),  # the same CSV, another night: the same data
               _set(root, "c", slower, nightly="2024-01-03")]
    db = str(root / "w.duckdb")
    summary = ingest_paths(folders, db)
    assert (summary.runs, summary.errors) == (3, 0)
    # the same data under two labels is two runs, each of harness results alone
    return db, text, slower


def iwh(db: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*IWH, "--db", db, "compare", *args], capture_output=True, text=True, timeout=120)


def test_a_set_against_another_holding_the_same_data_passes(sets):
    db, text, _ = sets
    out = iwh(db, "--base", "nightly=2024-01-01", "--head", "nightly=2024-01-02", "--fail-on", "regression",
              "--format", "json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    models = {r["name"] for r in csv.DictReader(text.splitlines())}
    assert {p["model"] for p in result["pairs"]} == models
    assert all(m["verdict"] in ("unchanged", "insufficient data", "n/a") for p in result["pairs"]
               for m in p["metrics"].values())
    hud = {r["metric"]: r for r in result["hud"]}
    assert hud["geomean_speedup"]["base"] == hud["geomean_speedup"]["head"] == pytest.approx(_geomean(text))
    # one night a side: a suite of single measurements is judged as they are
    assert (hud["geomean_speedup"]["verdict"], hud["geomean_speedup"]["how"]) == ("insufficient data", "n=1/1")
    # a --performance job alone: no accuracy check, so no pass rate (never a 0% that passes the gate)
    assert hud["pass_rate"]["base"] is None and hud["pass_rate"]["verdict"] == "n/a"


def test_a_hud_regression_of_the_suite_exits_1(sets, tmp_path):
    """Ten of 25 models 20% slower, two nights a side (HUD judges a window of nights, never one night
    against one): HUD's geomean speedup falls past 0.95x the base, a regression by HUD's rule that
    fails the gate, as each slowed model's own two samples do; one night a side decides nothing."""
    from inductor_warehouse.ingest.load import ingest_paths

    db, text, slower = sets
    b, h = _geomean(text), _geomean(slower)
    assert h < 0.95 * b
    one = iwh(db, "--base", "nightly=2024-01-01", "--head", "nightly=2024-01-03", "--fail-on", "regression",
              "--format", "json")
    assert one.returncode == 0, one.stderr
    hud = {r["metric"]: r for r in json.loads(one.stdout)["hud"]}
    assert (hud["geomean_speedup"]["verdict"], hud["geomean_speedup"]["how"]) == ("insufficient data", "n=1/1")
    folders = [_set(tmp_path, f"{side}{night}", body, window=side, night=night)
               for side, body in (("base", text), ("head", slower)) for night in ("1", "2")]
    two = str(tmp_path / "two.duckdb")
    assert ingest_paths(folders, two).errors == 0
    out = iwh(two, "--base", "window=base", "--head", "window=head", "--fail-on", "regression", "--format", "json")
    assert out.returncode == 1, out.stderr
    slowed = [r["name"] for r in list(csv.DictReader(text.splitlines()))[:10] if float(r["speedup"]) > 0]
    assert out.stderr.startswith(f"{len(slowed) + 1} regressions: ") and out.stderr.rstrip().endswith("geomean_speedup")
    assert all(f"{m} speedup" in out.stderr for m in slowed)
    hud = {r["metric"]: r for r in json.loads(out.stdout)["hud"]}
    assert (hud["geomean_speedup"]["base"], hud["geomean_speedup"]["head"]) == (pytest.approx(b), pytest.approx(h))
    assert (hud["geomean_speedup"]["verdict"], hud["geomean_speedup"]["how"]) == ("regression", "n=2/2")
    # without the gate the same comparison exits 0, and the text says what regressed
    plain = iwh(two, "--base", "window=base", "--head", "window=head")
    assert plain.returncode == 0 and "geomean_speedup" in plain.stdout and "regression" in plain.stdout


def test_a_model_that_stops_passing_its_accuracy_check_exits_1(tmp_path):
    """An accuracy set: pass -> fail_accuracy is a regression at once, one sample a side."""
    from inductor_warehouse.ingest.load import ingest_paths

    text = ACC.read_text()
    passing = text.replace("DistilBertForMaskedLM,1,fail_to_run", "DistilBertForMaskedLM,1,pass")
    assert passing != text
    roots = []
    for night, body in (("1", passing), ("2", text)):
        folder = tmp_path / night
        folder.mkdir()
        (folder / "accuracy_inductor.csv").write_text(body)
        (folder / "manifest.json").write_text(json.dumps({"nightly": night, "suite": "huggingface",
                                                          "mode": "inference", "dtype": "float32"}))
        roots.append(folder)
    db = str(tmp_path / "w.duckdb")
    assert ingest_paths(roots, db).errors == 0
    out = iwh(db, "--base", "nightly=1", "--head", "nightly=2", "--fail-on", "regression", "--format", "json")
    assert out.returncode == 1, out.stderr
    assert "DistilBertForMaskedLM accuracy" in out.stderr and "pass_rate" in out.stderr
    pair = next(p for p in json.loads(out.stdout)["pairs"] if p["model"] == "DistilBertForMaskedLM")
    assert (pair["metrics"]["accuracy"]["base"], pair["metrics"]["accuracy"]["head"]) == ("pass", "fail_to_run")


@pytest.mark.parametrize("base,head,why", [
    ("nightly=2024-02-30", "nightly=2024-01-02", "picks no runs"),
    ("nightly=2024-01-01", "nope", "picks no runs"),
    ("=x", "nightly=2024-01-02", "is not key=value"),
])
def test_a_bad_selector_exits_2(sets, base, head, why):
    db, _, _ = sets
    out = iwh(db, "--base", base, "--head", head, "--fail-on", "regression")
    assert out.returncode == 2 and why in out.stderr, out.stderr


def test_a_missing_warehouse_or_bad_threshold_exits_2(sets, tmp_path):
    db, _, _ = sets
    out = iwh(db, "--base", "nightly=2024-01-01", "--head", "nightly=2024-01-02", "--threshold", "speed=5%")
    assert out.returncode == 2 and "--threshold" in out.stderr
    out = iwh(str(tmp_path / "none.duckdb"), "--base", "nightly=1", "--head", "nightly=2")
    assert out.returncode == 2 and "none.duckdb" in out.stderr


def test_the_exit_codes_are_documented():
    out = subprocess.run([*IWH, "compare", "--help"], capture_output=True, text=True, timeout=60)
    words = " ".join(out.stdout.split())
    assert "Exit status: 0 when nothing regressed" in words and "1 when --fail-on regression finds a regression" in words
    assert "2 on a usage or data error" in words


def test_each_set_is_a_point_of_its_own_and_changes_steps_between_nights(sets):
    """With no torch version, each night's set is a point of its own by compiler version, with its
    own geomean (never one point of the three); by `--series nightly` a slowed model's step from one
    night to the next is a single measurement a side, which changes judges as compare does: no change
    point, exit 0, the summary line counting the sets' series and points, offering no kernel diff of
    runs that compiled nothing."""
    db, text, slower = sets
    out = subprocess.run([*IWH, "--db", db, "query", "harness/summary", "--format", "json"], capture_output=True,
                         text=True, timeout=120)
    points = {r["point"]: r for r in json.loads(out.stdout)}
    assert set(points) == {"nightly=2024-01-01", "nightly=2024-01-02", "nightly=2024-01-03"}
    assert not any(r["in_series"] for r in points.values())
    assert points["nightly=2024-01-01"]["geomean_speedup"] == pytest.approx(_geomean(text), abs=5e-5)
    assert points["nightly=2024-01-03"]["geomean_speedup"] == pytest.approx(_geomean(slower), abs=5e-5)
    model = next(r["name"] for r in csv.DictReader(text.splitlines()) if float(r["speedup"]) > 0)
    out = subprocess.run([*IWH, "--db", db, "changes", "--model", model, "--series", "nightly", "--metric", "harness"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "(no rows)" in out.stdout
    assert out.stderr.startswith("0 change points in 1 series of 3 points of harness results, ordered by nightly: "
                                 "no change")
    assert "the code of one" not in out.stderr
