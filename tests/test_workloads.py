"""One workload identity (views/12_workloads.sql) under every grouping, delta and "latest".

On the fixture warehouse (conftest.build_fixture_warehouse): the three CPU corpora (no workload
labels), and the GPU mlp runs of two workloads (training fp32, max-autotune inference bf16), each
captured twice. Expected values are worked out here from the runs' own columns and manifest labels
(json), never through the views under test.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from inductor_warehouse.store.api import Warehouse
from tests.conftest import build_fixture_warehouse, reader

LABELS = ("batch", "dtype", "mode", "variant")


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    return build_fixture_warehouse(tmp_path_factory.mktemp("workloads"))


def runs(db: str) -> list[dict]:
    con = reader(db)
    try:
        rows = con.execute("SELECT run_id, model, device, compiler_version, started_at, labels FROM runs").fetchall()
        kernels = dict(con.execute("SELECT run_id, count(*) FROM kernels WHERE generated GROUP BY ALL").fetchall())
    finally:
        con.close()
    out = []
    for run_id, model, device, version, started, labels in rows:
        labels = json.loads(labels) if labels else {}
        key = {k: str(labels[k]) for k in LABELS if labels.get(k) is not None}
        device = device or labels.get("device")
        if device:
            key["device"] = device
        workload = model + (" [" + " ".join(f"{k}={v}" for k, v in sorted(key.items())) + "]" if key else "")
        out.append({"run_id": run_id, "model": model, "version": version, "started": started,
                    "workload": workload, "kernels": kernels.get(run_id, 0)})
    return out


def release(version: str | None) -> tuple:
    return tuple(int(x) for x in (version or "").split("+")[0].split(".") if x.isdigit())


def test_every_run_has_the_workload_its_labels_say(db):
    expected = {r["run_id"]: r["workload"] for r in runs(db)}
    with Warehouse(db) as wh:
        got = dict(wh.sql("SELECT run_id, workload FROM run_workloads").rows())
    assert got == expected
    assert "mlp [batch=8 device=cuda dtype=fp32 mode=train variant=default]" in got.values()
    assert "mlp [device=cpu]" in got.values()


def test_kernel_count_deltas_never_cross_workloads(db):
    """Each delta is the kernels of a run minus those of the run before it in its own workload
    (releases in order): the GPU training and inference runs of mlp never meet the CPU ones."""
    by_workload = defaultdict(list)
    for r in runs(db):
        if r["model"] == "mlp":
            by_workload[r["workload"]].append(r)
    expected = []
    for rs in by_workload.values():
        rs.sort(key=lambda r: (release(r["version"]), r["version"] or "", r["started"], r["run_id"]))
        for before, after in zip([None, *rs], rs, strict=False):
            expected.append((after["workload"], after["version"], after["kernels"],
                             None if before is None else after["kernels"] - before["kernels"]))
    assert len(by_workload) == 3 and len(expected) == 8  # 3 CPU releases, 2 + 3 GPU captures
    with Warehouse(db) as wh:
        rows = wh.query("kernels/kernel_count_trend", model="mlp").select("workload", "compiler_version", "kernels",
                                                                            "kernels_delta").rows()
    assert sorted(rows, key=str) == sorted(expected, key=str)


def test_latest_is_the_newest_release_per_workload(db):
    expected = {}
    for r in runs(db):
        best = expected.get(r["workload"])
        order = (release(r["version"]), r["version"] or "", r["started"])
        if best is None or order > best[0]:
            expected[r["workload"]] = (order, r["run_id"])
    with Warehouse(db) as wh:
        got = dict(wh.query("dashboard/latest_per_workload").select("workload", "latest_run_id").rows())
    assert got == {w: run_id for w, (_, run_id) in expected.items()}


def test_sums_over_workloads_say_so(db):
    """overview/by_release adds up every workload of a release: its columns say so, and count them."""
    per_release = defaultdict(lambda: [0, set(), 0])
    for r in runs(db):
        if r["version"]:
            per_release[r["version"]][0] += 1
            per_release[r["version"]][1].add(r["workload"])
            per_release[r["version"]][2] += r["kernels"]
    with Warehouse(db) as wh:
        frame = wh.query("overview/by_release")
    assert {"workloads", "kernels_all_workloads"} <= set(frame.columns)
    got = {v: (n, w, k) for v, n, w, k in frame.select("compiler_version", "runs", "workloads",
                                                         "kernels_all_workloads").rows() if v}
    assert got == {v: (n, len(w), k) for v, (n, w, k) in per_release.items()}
