"""A warm run's compile time (and its compile phases) measures loading, not compiling (docs/compare.md):
`iwh changes` and compile/phase_changes never judge a warm point against a compiled one, compare warns
of an environment difference only where both sides know the value, and the summary's geomean leaves
out the workloads it could not compare. On real captures with Inductor's caches on
(tests/fixtures/SOURCES.md): torch 2.13 gbreak_dyn cold, warm, cold again, warm again (two caches),
and torch 2.5.1 gbreak_dyn cold then warm. Read here from the files alone: each run's cache outcomes
from its trace's cache artifacts, the torch CUDA version from the one fx_graph_runnable.py kept."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from inductor_warehouse.analysis import regress
from inductor_warehouse.analysis.changes import PHASE, changes
from inductor_warehouse.analysis.compare import compare
from inductor_warehouse.analysis.metrics import SummaryRow
from inductor_warehouse.analysis.render import geomean_text
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.store.api import Warehouse
from tests.conftest import unpack, FIXTURES, reader
from tests.test_caches import counted, log_text

ARCHIVE = FIXTURES / "cache_answers" / "cpu-torch2.5-2.13-cold-warm.tar.xz"
SERIES = {"gbreak_dyn-cold": "cold", "gbreak_dyn-cold2": "cold", "gbreak_dyn-warm": "warm", "gbreak_dyn-warm2": "warm"}


def outcomes(run: Path) -> Counter:
    """hit / miss counts of the run's cache artifacts (FX graph and AOTAutograd caches together)."""
    found: Counter = Counter()
    for log in (run / "trace").iterdir():
        found.update(outcome for (_, _, outcome), n in counted(log_text(log)).items() for _ in range(n))
    return found


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    return unpack(ARCHIVE, tmp_path_factory.mktemp("cacheans"))


@pytest.fixture(scope="module")
def series_db(runs: Path) -> str:
    """The four 2.13 runs, labelled series=cold or series=warm, as the hunter ingested them."""
    db = str(runs / "series.duckdb")
    for run, point in SERIES.items():
        assert ingest_paths([runs / "2.13" / run], db, labels={"series": point}).errors == 0
    return db


def test_the_series_is_two_compiled_runs_then_two_warm_ones(runs: Path) -> None:
    """The premise, from the traces: the cold runs missed every lookup, the warm runs hit every one."""
    for run, point in SERIES.items():
        found = outcomes(runs / "2.13" / run)
        known, none = ("miss", "hit") if point == "cold" else ("hit", "miss")
        assert found[known] > 0 and found[none] == 0, (run, found)
        assert json.loads((runs / "2.13" / run / "manifest.json").read_text())["cache"] == run.split("-")[1]


def test_phase_changes_say_a_warm_point_is_not_comparable(series_db: str) -> None:
    """compile/phase_changes between the cold point and the warm one: every phase that moved is 'not
    comparable' (compiled vs warm), none 'faster'; the point's time is still the median of its two runs."""
    with Warehouse(series_db) as wh:
        rows = wh.query("compile/phase_changes", series="series", workloads=None).to_dicts()
    assert rows, "the warm runs' phases are shorter: the query lists the step"
    assert {(r["before_version"], r["after_version"]) for r in rows} == {("cold", "warm")}
    assert {(r["direction"], r["before_cache"], r["after_cache"]) for r in rows} == {
        (regress.NOT_COMPARABLE, "compiled", "warm")}
    assert {(r["before_runs"], r["after_runs"]) for r in rows} == {(2, 2)}


def test_phase_changes_still_judge_points_of_one_kind(runs: Path, tmp_path: Path) -> None:
    """Two warm points (each run its own point) are of one kind: their phases are judged as before."""
    db = str(tmp_path / "warm.duckdb")
    for run in ("gbreak_dyn-warm", "gbreak_dyn-warm2"):
        assert ingest_paths([runs / "2.13" / run], db, labels={"series": run}).errors == 0
    with Warehouse(db) as wh:
        rows = wh.query("compile/phase_changes", series="series", workloads=None, ratio=0.0,
                        min_seconds=0.0).to_dicts()
    assert rows
    assert {(r["before_cache"], r["after_cache"]) for r in rows} == {("warm", "warm")}
    assert {r["direction"] for r in rows} <= {"faster", "slower"}


def test_changes_never_calls_a_cache_load_a_compiler_speed_up(series_db: str) -> None:
    """`iwh changes --series series`: the cold -> warm step's phases are one unjudged line that says the
    caches differ, as compare says it; nothing of it is a judged (gating) phase change."""
    with reader(series_db) as con:
        report = changes(con, "gbreak_dyn", series_label="series")
    phases = [c for p in report.points for c in p.changes if c.metric == PHASE]
    assert len(phases) == 1
    assert not phases[0].judged
    assert phases[0].detail.startswith("not comparable, caches compiled vs warm: ")
    assert "faster" not in phases[0].detail


@pytest.fixture(scope="module")
def mixed_db(runs: Path) -> str:
    """2.5.1 cold and warm, and 2.13 cold, each with a label `pick` naming it."""
    db = str(runs / "mixed.duckdb")
    for path, pick in (("2.5.1/gbreak_dyn-cold", "cold251"), ("2.5.1/gbreak_dyn-warm", "warm251"),
                       ("2.13/gbreak_dyn-cold", "cold213")):
        assert ingest_paths([runs / path], db, labels={"pick": pick}).errors == 0
    return db


def cuda_versions(run: Path) -> set[str]:
    """The torch CUDA versions a run's files state (fx_graph_runnable's `# torch cuda version:` line)."""
    found = set()
    for f in run.rglob("*"):
        if f.is_file():
            found |= {line.split(":", 1)[1].strip() for line in f.read_text(errors="replace").splitlines()
                      if line.startswith("# torch cuda version:")}
    return found


def test_an_unknown_side_is_no_difference(runs: Path, mixed_db: str) -> None:
    """2.5.1 cold against warm: the cold run's files state CUDA 12.4, the warm run's (every graph loaded,
    no fx_graph_runnable written) none. compare notes the head's as unknown and warns of no difference."""
    assert cuda_versions(runs / "2.5.1" / "gbreak_dyn-cold") == {"12.4"}
    assert cuda_versions(runs / "2.5.1" / "gbreak_dyn-warm") == set()
    with reader(mixed_db) as con:
        result = compare(con, "pick=cold251", "pick=warm251")
    assert len(result.pairs) == 1
    assert not [w for w in result.warnings if "differs between the sides" in w]
    assert "cuda_version is unknown on the head side for 1 of 1 models (e.g. gbreak_dyn): not compared" in result.notes


def test_a_difference_both_sides_know_is_still_warned(runs: Path, mixed_db: str) -> None:
    """2.5.1 cold against 2.13 cold: both manifests name their torch, and they differ (warned); the 2.13
    CPU wheel states no CUDA version (noted as unknown, not a difference)."""
    torch = [json.loads((runs / path / "manifest.json").read_text())["torch"]
             for path in ("2.5.1/gbreak_dyn-cold", "2.13/gbreak_dyn-cold")]
    assert torch == ["2.5.1+cu124", "2.13.0+cpu"]
    assert cuda_versions(runs / "2.13" / "gbreak_dyn-cold") == set()
    with reader(mixed_db) as con:
        result = compare(con, "pick=cold251", "pick=cold213")
    assert [w.split(" differs")[0] for w in result.warnings if "differs between the sides" in w] == ["compiler_version"]
    assert any(n.startswith("cuda_version is unknown on the head side") for n in result.notes)


def test_the_summary_geomean_leaves_out_what_it_cannot_compare(runs: Path, series_db: str) -> None:
    """2.13 cold against warm: compile_s is not comparable (the warm runs loaded every graph, see the
    premise above), so the summary's geomean has no workload to take and says why; kernels, unchanged
    between the sides, keep theirs."""
    with reader(series_db) as con:
        result = compare(con, "series=cold", "series=warm")
    [pair] = result.pairs
    assert pair.metrics["compile_s"].verdict == regress.NOT_COMPARABLE
    rows = {s.metric: s for s in result.summary}
    compile_s = rows["compile_s"]
    assert (compile_s.geomean_ratio, compile_s.geomean_workloads, compile_s.geomean_not_comparable) == (None, 0, 1)
    assert geomean_text(compile_s) == "none (1 left out: not comparable)"
    assert pair.metrics["kernels"].verdict == regress.UNCHANGED
    assert (rows["kernels"].geomean_ratio, rows["kernels"].geomean_not_comparable) == (1.0, 0)
    assert geomean_text(rows["kernels"]) == "1.000x"


def test_the_geomean_names_each_reason_it_leaves_a_workload_out() -> None:
    row = SummaryRow("compile_s", 4, 10.0, 5.0, 0.5, 0, 0, geomean_workloads=1, geomean_left_out=1,
                     geomean_not_comparable=2)
    assert geomean_text(row) == "0.500x (3 left out: 1 with 0 on one side, 2 not comparable)"
