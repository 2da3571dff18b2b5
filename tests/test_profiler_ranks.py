"""A profiler trace's rank: Kineto writes `distributedInfo` (rank, world_size, backend) when
torch.distributed is initialised. Each rank is a run and a workload of its own, and the ranks of one
folder are one job, as TORCH_TRACE logs' ranks are (tests/fixtures/SOURCES.md: HTA's trace_filter
traces, ranks 0 and 1 of 128)."""

from __future__ import annotations

import gzip
import json
import shutil

from inductor_warehouse.ingest.discover import discover
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

HTA = FIXTURES / "profiler" / "facebookresearch__HolisticTraceAnalysis"
RANKS = HTA / "trace_filter"
LOG = FIXTURES / "trace_ranks" / "multi_rank_schedule" / "dedicated_log_torch_trace_rank_1_n8zycf07.log.gz"


def trace(path) -> dict:
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if path.name.endswith(".gz") else data)


def test_the_ranks_of_one_folder_are_one_job_and_workloads_apart(tmp_path):
    files = sorted(RANKS.glob("*.json.gz"))
    infos = {f.name: trace(f)["distributedInfo"] for f in files}
    assert {i["rank"] for i in infos.values()} == {0, 1}
    assert {(i["world_size"], i["backend"]) for i in infos.values()} == {(128, "nccl")}
    runs = discover([RANKS]).runs
    assert {r.root.name: r.rank for r in runs} == {name: i["rank"] for name, i in infos.items()}
    assert {(r.job, r.job_root) for r in runs} == {(RANKS.name, RANKS)}
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([RANKS], db, model="m")
    con = reader(db)
    got = con.execute("SELECT r.source_path, r.rank, r.job, r.labels ->> 'job', r.labels ->> 'world_size', "
                      "r.labels ->> 'dist_backend', m.workload FROM runs r JOIN run_metrics m USING (run_id) "
                      "ORDER BY r.rank").fetchall()
    assert got == [(str(f), infos[f.name]["rank"], str(RANKS), RANKS.name, "128", "nccl",
                    f"m [device=cuda rank={infos[f.name]['rank']}]") for f in files]  # CUDA-launched kernels
    sums = dict(con.execute("SELECT r.rank, sum(t.duration_us) FROM timings t JOIN runs r USING (run_id) "
                            "GROUP BY 1").fetchall())
    for f in files:
        kernels = [e for e in trace(f)["traceEvents"] if e.get("cat") == "kernel"]
        assert sums[infos[f.name]["rank"]] == sum(e["dur"] for e in kernels)


def test_a_rank_after_the_events_is_stored(tmp_path):
    # HTA's call_stack trace writes distributedInfo after traceEvents: the parse, not the sniff, reads it
    path = HTA / "call_stack" / "backward_thread.json"
    doc = trace(path)
    assert list(doc) == ["traceEvents", "distributedInfo"]
    [run] = discover([path]).runs
    assert run.rank is None
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([path], db)
    assert reader(db).execute("SELECT rank, job FROM runs").fetchall() == [(doc["distributedInfo"]["rank"], None)]


def test_a_trace_logs_rank_stands_over_the_profiles(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps({"model": "m"}))
    shutil.copy(LOG, folder / LOG.name)  # its file name says rank 1 (tests/test_trace_ranks.py)
    doc = trace(RANKS / "sampled_rank-0.json.gz")
    doc["distributedInfo"]["rank"] = 7
    (folder / "profile.json").write_text(json.dumps(doc))
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([folder], db)
    assert reader(db).execute("SELECT rank, labels ->> 'world_size' FROM runs").fetchall() == [(1, "128")]


def test_one_run_holding_two_ranks_profiles_names_no_rank(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps({"model": "m"}))
    for f in sorted(RANKS.glob("*.json.gz")):
        shutil.copy(f, folder / f.name)
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([folder], db)
    assert reader(db).execute("SELECT rank FROM runs").fetchall() == [(None,)]


def _cuda_launched_kernels(doc: dict) -> int:
    """Kernel events whose correlation is a CUDA runtime or driver API call's: a CUDA device's kernels."""
    events = doc["traceEvents"]
    launched = {e["args"]["correlation"] for e in events
                if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in (e.get("args") or {})}
    return sum(1 for e in events if e.get("cat") == "kernel" and (e.get("args") or {}).get("correlation") in launched)


def test_a_trace_without_device_properties_is_a_cuda_run_by_its_kernels(tmp_path):
    """HTA's trace_filter ranks and call_stack trace have no deviceProperties, but their kernels were
    launched by cudaLaunchKernel (the same correlation): the runs' device is cuda, not unknown."""
    paths = [*sorted(RANKS.glob("*.json.gz")), HTA / "call_stack" / "backward_thread.json"]
    docs = {str(p): trace(p) for p in paths}
    assert all("deviceProperties" not in d and _cuda_launched_kernels(d) > 0 for d in docs.values())
    db = str(tmp_path / "wh.duckdb")
    ingest_paths(paths, db, model="m")
    got = dict(reader(db).execute("SELECT source_path, device FROM runs").fetchall())
    assert got == {p: "cuda" for p in docs}
