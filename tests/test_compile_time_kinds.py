"""A point's compile time is the least of its runs of one cache kind (views/06_point_values.sql's
compile_time_of_point; analysis/metrics.py's of_one_kind for `iwh compare`): its compiled runs (caches
off or cold) where it has any, never a warm run's cache load. On real captures: CPU torch 2.13 (cold,
warm, warm with the AOTAutograd cache off) and 2.14.1 (cold, warm) of every zoo workload, the GPU
torch 2.11 runs (cold and warm, training and max-autotune inference) and the profiled GPU training run
(caches off). Read here from the files alone: a run's kind from its trace's cache artifacts (hit or
miss), its compile time from its compilation_metrics records (Dynamo's cumulative time and the lazily
compiled backward's), its point from its manifest (torch, device) and its folder's name."""

from __future__ import annotations

import json
import tarfile
from collections import Counter
from pathlib import Path

import pytest

from inductor_warehouse.analysis import regress
from inductor_warehouse.analysis.compare import compare
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.store.api import Warehouse
from tests.conftest import GPU_TRAIN_RUN, reader, unpack_gpu_captures
from tests.test_caches import CPU_CAPTURES, counted, log_text

RECORDS = ("compilation_metrics", "bwd_compilation_metrics")


def read_run(run: Path) -> tuple[tuple[str, str, str], str, float | None]:
    """(point: torch, device, run name), cache kind, compile time in seconds, from the run's files."""
    manifest = json.loads((run / "manifest.json").read_text())
    outcomes: Counter = Counter()
    total_us, seen = 0, False
    for log in sorted((run / "trace").iterdir()):
        text = log_text(log)
        outcomes.update(outcome for (_, _, outcome), n in counted(text).items() for _ in range(n))
        for line in text.splitlines():
            for record in RECORDS:
                at = line.find('{"' + record + '"')
                if at >= 0:
                    m = json.loads(line[at:])[record]
                    seen = True
                    total_us += (m.get("dynamo_cumulative_compile_time_us") or 0) + (
                        m.get("backward_cumulative_compile_time_us") or 0)
    lookups = sum(outcomes.values())
    kind = ("compiled" if outcomes["hit"] == 0 else "warm" if outcomes["hit"] == lookups else "partial")
    return (manifest["torch"], manifest["device"], run.name), kind, total_us / 1e6 if seen else None


@pytest.fixture(scope="module")
def kinds(tmp_path_factory) -> tuple[str, dict]:
    root = tmp_path_factory.mktemp("kinds")
    with tarfile.open(CPU_CAPTURES) as tf:
        tf.extractall(root / "cpu", filter="data")
    gpu = unpack_gpu_captures(root)
    db = str(root / "wh.duckdb")
    assert ingest_paths([root / "cpu", gpu, GPU_TRAIN_RUN], db).errors == 0
    points: dict[tuple[str, str, str], list[tuple[str, float]]] = {}
    runs = [p.parent for top in (root / "cpu", gpu) for p in top.rglob("manifest.json")] + [GPU_TRAIN_RUN]
    for run in runs:
        point, kind, seconds = read_run(run)
        if seconds is not None:
            points.setdefault(point, []).append((kind, seconds))
    return db, points


def expected(runs: list[tuple[str, float]]) -> tuple[str, float, int]:
    """The point's kind, its compile time (the least of its runs of that kind) and the runs left out."""
    kind = next(k for k in ("compiled", "partial", "warm") if any(r[0] == k for r in runs))
    return kind, min(s for k, s in runs if k == kind), sum(k != kind for k, _ in runs)


def test_a_warm_run_never_makes_a_points_compile_time(kinds):
    db, points = kinds
    mixed = {p: runs for p, runs in points.items() if len({k for k, _ in runs}) > 1}
    # each point of the captures met the caches both ways: 8 workloads a CPU release, 6 on the GPU
    assert set(mixed) == set(points) and len(points) == 22
    # the least of all the runs is a warm one's: the test tells the rules apart
    assert all(min(runs, key=lambda r: r[1])[0] == "warm" for runs in mixed.values())
    gpu_train = expected(points[("2.11.0+cu130", "cuda", "mlp__train__fp32__default")])
    assert gpu_train[0] == "compiled" and gpu_train[2] == 1 and len(points[("2.11.0+cu130", "cuda",
                                                                            "mlp__train__fp32__default")]) == 3
    with Warehouse(db) as wh:
        breakdown = wh.query("compile/compile_time_breakdown", limit=1000).to_dicts()
        trend = wh.query("dashboard/trend_points").to_dicts()
    by_point = {}
    for r in breakdown:
        model, mode = r["model"], ("train" if "mode=train" in r["workload"] else "infer")
        [name] = {p[2] for p in points if p[0] == r["compiler_version"] and p[1] == r["device"]
                  and p[2].startswith(f"{model}__{mode}__")}
        by_point[(r["compiler_version"], r["device"], name)] = r
    assert set(by_point) == set(points)
    for point, runs in points.items():
        kind, seconds, left_out = expected(runs)
        row = by_point[point]
        assert (row["cache"], row["total_s"], row["runs"], row["other_runs"]) == (
            kind, round(seconds, 3), len(runs) - left_out, left_out), point
    # the Trends page's line goes through the same value at each of the point's runs
    for r in trend:
        row = next(b for b in breakdown if (b["workload"], b["compiler_version"]) == (r["workload"], r["compiler_version"]))
        assert (r["compile_s_point"], r["compile_cache_point"]) == (row["total_s"], row["cache"])
    assert {r["cache"] for r in trend} == {"compiled", "warm"}


def test_compare_takes_a_sides_compiled_runs(kinds):
    db, points = kinds
    # 2.13: cold, warm, warm with the AOTAutograd cache off; 2.14.1: cold and warm
    base = points[("2.13.0+cpu", "cpu", "mlp__train__fp32__default")]
    head = points[("2.14.1+cu130", "cpu", "mlp__train__fp32__default")]
    with reader(db) as con:
        result = compare(con, "compiler=2.13,model=mlp,mode=train,device=cpu",
                         "compiler=2.14.1,model=mlp,mode=train,device=cpu")
    [pair] = result.pairs
    judged = pair.metrics["compile_s"]
    assert (judged.base, judged.head) == pytest.approx((expected(base)[1], expected(head)[1]), abs=1e-6)
    assert judged.verdict != regress.NOT_COMPARABLE
    assert "base: 2 warm runs left out" in judged.how and "head: 1 warm run left out" in judged.how
    # a side of warm runs alone against a compiled one: caches, not compilers
    with reader(db) as con:
        result = compare(con, "cache=cold,compiler=2.11,model=mlp,mode=train", "cache=warm,compiler=2.11,model=mlp,mode=train")
    [pair] = result.pairs
    assert (pair.metrics["compile_s"].verdict, pair.metrics["compile_s"].how) == (regress.NOT_COMPARABLE,
                                                                                  "caches compiled vs warm")


def test_a_points_compile_phases_are_its_runs_of_one_kind(kinds):
    """compile/phase_series and compile/phase_changes take a point's phase times from the runs its compile
    time takes (a warm run's phases are a cache load's: with them, 2.13's mlp train read its
    inductor_compile as the median of a compiled run and a warm one, and every phase "slower" in 2.14.1)."""
    db, points = kinds
    with Warehouse(db) as wh:
        series = wh.query("compile/phase_series", workloads=None).to_dicts()
        changes = wh.query("compile/phase_changes", workloads=None, ratio=0.0, min_seconds=0.0).to_dicts()
    checked = 0
    for (torch, device, name), runs in points.items():
        model, mode, dtype, variant = name.split("__")
        kind, _, _ = expected(runs)
        labels = (f"mode={mode}", f"dtype={dtype}", f"variant={variant}")

        def here(workload: str, labels: tuple[str, ...] = labels) -> bool:
            return all(label in workload for label in labels)

        rows = [r for r in series if (r["model"], r["compiler_version"], r["device"]) == (model, torch, device)
                and here(r["workload"])]
        assert rows, (torch, device, name)
        assert max(r["runs"] for r in rows) == sum(k == kind for k, _ in runs), (torch, device, name)
        sides = [r["before_runs"] for r in changes if r["before_version"] == torch and r["model"] == model
                 and r["device"] == device and here(r["workload"])]
        sides += [r["after_runs"] for r in changes if r["after_version"] == torch and r["model"] == model
                  and r["device"] == device and here(r["workload"])]
        assert all(n <= sum(k == kind for k, _ in runs) for n in sides), (torch, device, name)
        checked += 1
    assert checked == len(points)
