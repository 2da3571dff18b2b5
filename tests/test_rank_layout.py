"""One multi-rank job, however its files are laid out: per-rank folders, torchrun's `--log-dir`
files, a capture's one torch_logs.txt of every rank (tests/fixtures/ranks/layout, SOURCES.md).

Expected values are read from the files here, independently of the parsers: the ranks and compile
ids a trace's envelopes name, the fusion lines of each rank's stderr (or its `[rank<N>]:` lines of a
shared file), and the Dynamo counters the job wrote beside it (the hunt's truth files, quoted)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from inductor_warehouse.analysis.canned_rows import run_query
from inductor_warehouse.ingest.discover import discover
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.ingest.parsers.torch_logs_ranks import lines_of
from tests.conftest import unpack, FIXTURES, reader

ARCHIVE = FIXTURES / "ranks" / "layout" / "fsdp4-diverge-and-captured.tar.xz"
# a fusion decision as torch's scheduler logs it: `fusing a with b` or `cannot fuse a with b: why`
FUSION = re.compile(r"\[__fusion\].*(fusing \S+ with \S+$|cannot fuse )")
START = re.compile(r'\{"dynamo_start".*?"frame_id": (\d+), "frame_compile_id": (\d+)(?:, "attempt": (\d+))?')


@pytest.fixture(scope="module")
def jobs(tmp_path_factory) -> Path:
    return unpack(ARCHIVE, tmp_path_factory.mktemp("ranks"))


def _trace(folder: Path, rank: int) -> Path:
    return next(folder.glob(f"**/trace/dedicated_log_torch_trace_rank_{rank}_*.log"))


def _compile_ids(log: Path) -> set[str]:
    ids = set()
    for line in log.read_text().splitlines():
        if m := START.search(line):
            ids.add(f"{m.group(1)}/{m.group(2)}")
    return ids


def _fusion_lines(lines) -> int:
    return sum(1 for line in lines if FUSION.search(line))


def _stderr(job: Path, local_rank: int) -> Path:
    return next(job.glob(f"torchrun_logs/*/attempt_0/{local_rank}/stderr.log"))


def test_per_rank_folders_are_one_job(jobs, tmp_path):
    """`job/rank<N>/{trace,torch_compile_debug}`: one job, one model, each rank the trace's."""
    job = jobs / "fsdp4-diverge"
    db = str(tmp_path / "wh.duckdb")
    summary = ingest_paths([job / f"rank{r}" for r in range(4)], db)  # `iwh ingest job/rank*`
    assert summary.runs == 4 and summary.errors == 0, summary.line()
    with reader(db) as con:
        runs = con.execute("SELECT model, rank, job, labels->>'job' FROM runs ORDER BY rank").fetchall()
        assert runs == [("fsdp4-diverge", r, str(job), "fsdp4-diverge") for r in range(4)]
        diverging = run_query(con, "multirank/divergences")
    ids = {r: _compile_ids(_trace(job / f"rank{r}", r)) for r in range(4)}
    common = set.intersection(*ids.values())
    extra = {(key, r) for r in range(4) for key in ids[r] - common}
    assert extra == {("0/2", 3), ("0/3", 3), ("2/0", 1)}  # rank 3's recompiles, rank 1's graph break
    told = {(row["key"], row["rank"]) for row in diverging if row["kind"] == "compile_ids" and row["value"] == "compiled"}
    assert told == extra


def test_lone_logs_in_rank_folders_are_one_job(jobs, tmp_path):
    """Trace logs alone in `rank<N>/trace/`: a job of two ranks, its model the job's folder."""
    job = tmp_path / "job"
    for r in (0, 1):
        (job / f"rank{r}" / "trace").mkdir(parents=True)
        shutil.copy(_trace(jobs / "fsdp4-diverge" / f"rank{r}", r), job / f"rank{r}" / "trace")
    runs = discover([job]).runs
    assert sorted((r.rank, r.job, r.job_root) for r in runs) == [(0, "job", job), (1, "job", job)]


def test_torchrun_log_dir_joins_its_rank(jobs, tmp_path):
    """torchrun's `<log_dir>/<id>/attempt_0/<local_rank>/stderr.log` is its rank's TORCH_LOGS: no run of
    its own, its fusion decisions on the rank's run, no recompile or graph break counted twice."""
    job = jobs / "fsdp4-diverge"
    db = str(tmp_path / "wh.duckdb")
    summary = ingest_paths([job], db)
    assert summary.runs == 4, summary.line()
    with reader(db) as con:
        fusions = dict(con.execute("SELECT r.rank, count(f.run_id) FROM runs r LEFT JOIN fusion_decisions f "
                                   "USING (run_id) GROUP BY r.rank").fetchall())
        recompiles = dict(con.execute("SELECT r.rank, m.recompiles FROM runs r JOIN run_metrics m USING (run_id)").fetchall())
        breaks = run_query(con, "graph_breaks/top_reasons")
        reasons = run_query(con, "compile/recompile_reasons")
    assert fusions == {r: _fusion_lines(_stderr(job, r).read_text().splitlines()) for r in range(4)}
    assert all(fusions.values())
    # a recompile is a compile of a frame past its first: frame_compile_id > 0 in the trace
    assert recompiles == {r: sum(1 for i in _compile_ids(_trace(job / f"rank{r}", r)) if not i.endswith("/0"))
                          for r in range(4)}
    # Dynamo's own `graph_break` counter, which rank 1 wrote beside the job
    counters = json.loads((jobs / "truth-fsdp4-diverge" / "rank1.json").read_text())["dynamo_counters"]
    assert [b["graph_breaks"] for b in breaks] == [sum(counters["graph_break"].values())] == [2]
    assert sum(r["recompiles"] for r in reasons) == sum(recompiles.values())


def test_captured_torch_logs_split_by_rank(jobs, tmp_path):
    """`iwh capture -- torchrun`'s one torch_logs.txt: each rank's `[rank<N>]:` lines to its run."""
    job = jobs / "fsdp4-captured"
    db = str(tmp_path / "wh.duckdb")
    summary = ingest_paths([job], db)
    assert summary.runs == 4 and summary.errors == 0, summary.line()
    assert not summary.skipped_files, summary.skipped_files
    lines = (job / "torch_logs.txt").read_text().splitlines()
    with reader(db) as con:
        fusions = dict(con.execute("SELECT r.rank, count(f.run_id) FROM runs r LEFT JOIN fusion_decisions f "
                                   "USING (run_id) GROUP BY r.rank").fetchall())
    mine = {r: _fusion_lines(x for x in lines if x.startswith(f"[rank{r}]:")) for r in range(4)}
    assert fusions == mine and all(mine.values())
    assert sum(fusions.values()) == _fusion_lines(lines)  # every decision once


def test_torch_logs_of_no_rank_is_skipped_with_reason(jobs, tmp_path):
    """A shared TORCH_LOGS file none of whose lines names a process of the job is listed as skipped."""
    job = tmp_path / "fsdp4-captured"
    shutil.copytree(jobs / "fsdp4-captured", job)
    logs = job / "torch_logs.txt"
    logs.write_text("".join(x + "\n" for x in logs.read_text().splitlines() if not x.startswith("[rank")))
    found = discover([job])
    assert len(found.runs) == 4
    assert not any(a.path == logs for r in found.runs for a in r.artifacts)
    assert found.skipped.paths == {"TORCH_LOGS file of several processes whose lines name none of them": [str(logs)]}


def test_tee_console_split_by_process(jobs):
    """torchrun's `--tee` console copy (every line `[default<N>]:`, torch's own lines `[rank<N>]:` after
    it): a process's lines, warnings before its process group included, are exactly its stderr.log."""
    console = (jobs / "truth-fsdp4-diverge" / "torchrun.err").read_text().splitlines()
    job = jobs / "fsdp4-diverge"
    for r in range(4):
        pid = int(re.search(r"pid_(\d+)$", next(job.glob(f"rank{r}/torch_compile_debug/run_*")).name).group(1))
        own = _stderr(job, r).read_text().splitlines()
        assert lines_of(console, r, pid) == own
        assert lines_of(console, r, None) == own  # a run that knows its rank alone


def test_harness_job_torch_logs_split_by_pid(tmp_path):
    """The benchmark harness's own loop (a process a model, one after another, one torch_logs.txt):
    each model's run takes the fusion lines its pid wrote, the later processes' too."""
    from tests.conftest import unpack_harness_captures

    job = unpack_harness_captures(tmp_path) / "cpu-torch2.14.1" / "accuracy-job"
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([job], db)
    lines = (job / "torch_logs.txt").read_text().splitlines()
    with reader(db) as con:
        got = dict(con.execute("SELECT r.pid, count(f.run_id) FROM runs r LEFT JOIN fusion_decisions f USING (run_id) "
                               "WHERE r.pid IS NOT NULL GROUP BY r.pid").fetchall())
    assert len(got) == 3
    assert got == {pid: _fusion_lines(x for x in lines if re.match(rf"[VIWEC]\d{{4}} \S+ +{pid} ", x)) for pid in got}
    assert all(got.values())
