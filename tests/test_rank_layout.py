"""One multi-rank job, however its files are laid out: per-rank folders, torchrun's `--log-dir`
files, a capture's one torch_logs.txt of every rank (tests/fixtures/ranks/layout, SOURCES.md).

Expected values are read from the files here, independently of the parsers: the ranks and compile
ids a trace's envelopes name, the fusion lines of each rank's stderr (or its `[rank<N>]:` lines of a
shared file), and the Dynamo counters the job wrote beside it (the hunt's truth files, quoted)."""

from __future__ import annotations

import re
import shutil
import tarfile
from pathlib import Path

import pytest

from inductor_warehouse.analysis.canned_rows import run_query
from inductor_warehouse.ingest.discover import discover
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

ARCHIVE = FIXTURES / "ranks" / "layout" / "fsdp4-diverge-and-captured.tar.xz"
# a fusion decision as torch's scheduler logs it: `fusing a with b` or `cannot fuse a with b: why`
FUSION = re.compile(r"\[__fusion\].*(fusing \S+ with \S+$|cannot fuse )")
START = re.compile(r'\{"dynamo_start".*?"frame_id": (\d+), "frame_compile_id": (\d+)(?:, "attempt": (\d+))?')


@pytest.fixture(scope="module")
def jobs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ranks")
    with tarfile.open(ARCHIVE) as tf:
        tf.extractall(root, filter="data")
    return root


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
