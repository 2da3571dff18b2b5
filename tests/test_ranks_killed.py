"""A rank killed mid-compile is a run that did not finish. Real 4-rank FSDP2 captures of torch 2.11 on
4 H100s (tests/fixtures/ranks/kill/, SOURCES.md): rank 2 SIGKILLs itself in the compile of 0/1 and
torchrun tears the other ranks down with SIGTERM. Found by the `ranks` hunt: the killed rank compared
against the finished rank as "kernels 31 -> 4, improvement", and under `iwh capture -- torchrun` the
manifest's exit code is torchrun's (1), which reads as a process that raised."""

from __future__ import annotations

import json
import re
import tarfile

import pytest
from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.ingest.parsers.torchrun_exits import rank_exits
from tests.conftest import FIXTURES, reader

KILL = FIXTURES / "ranks" / "kill"
_RECORD = re.compile(r'^V\d{4} [\d:.]+ +\d+ \S+\] \{"(dynamo_start|compilation_metrics)": .*"frame_id": (\d+), '
                     r'"frame_compile_id": (\d+)')


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("kill")
    for name in ("fsdp4-rank2-finished-and-killed.tar.xz", "fsdp4-kill-captured-rank2.tar.xz"):
        with tarfile.open(KILL / name) as tar:
            tar.extractall(root, filter="data")
    return root


def _compiles(log):
    """Compile ids begun (dynamo_start) and reported (compilation_metrics), read off the raw log."""
    seen: dict[str, set[str]] = {"dynamo_start": set(), "compilation_metrics": set()}
    for line in log.read_text().splitlines():
        if m := _RECORD.match(line):
            seen[m.group(1)].add(f"{m.group(2)}/{m.group(3)}")
    return seen


def _runs(db):
    with reader(db) as con:
        return {r[0]: r[1:] for r in con.execute(
            "SELECT split_part(source_path, '/', -3), run_id, run_unfinished(labels), labels ->> 'exit_code', "
            "labels ->> 'job_exit_code', rank FROM runs").fetchall()}


def test_the_files_are_what_the_tests_say(files):
    [killed] = (files / "fsdp4-kill-rank2" / "trace").iterdir()
    [finished] = (files / "fsdp4-rank2" / "trace").iterdir()
    assert _compiles(killed) == {"dynamo_start": {"0/0", "0/1"}, "compilation_metrics": {"0/0"}}
    assert _compiles(finished)["compilation_metrics"] == {"0/0", "0/1", "1/0"}
    assert _compiles(finished)["dynamo_start"] <= _compiles(finished)["compilation_metrics"]
    assert json.loads((files / "fsdp4-kill-captured-rank2" / "manifest.json").read_text())["exit_code"] == 1


def test_a_trace_that_never_reports_a_begun_compile_is_an_unfinished_run(files, tmp_path):
    db = str(tmp_path / "w.duckdb")
    ingest_paths([files / "fsdp4-rank2", files / "fsdp4-kill-rank2"], db)
    runs = _runs(db)
    assert runs["fsdp4-kill-rank2"][1] == "compile 0/1 never finished"
    assert runs["fsdp4-rank2"][1] is None  # every compile it began, it reported
    with reader(db) as con:
        total = dict(con.execute("SELECT run_id, total_s FROM run_compile_time").fetchall())
    # the compile it died in has no record: the others' sum is no whole compile time
    assert total[runs["fsdp4-kill-rank2"][0]] is None and total[runs["fsdp4-rank2"][0]] > 0


def test_compare_takes_no_sample_of_a_killed_rank(files, tmp_path):
    db = str(tmp_path / "w.duckdb")
    ingest_paths([files / "fsdp4-rank2", files / "fsdp4-kill-rank2"], db, model="fsdp")
    runs = _runs(db)
    res = CliRunner().invoke(cli, ["compare", "--base", runs["fsdp4-rank2"][0], "--head", runs["fsdp4-kill-rank2"][0],
                                   "--db", db, "--format", "json", "--fail-on", "regression"])
    [pair] = json.loads(res.stdout)["pairs"]
    metrics = pair["metrics"]
    assert metrics["kernels"]["head"] is None and metrics["kernels"]["verdict"] != "improvement"
    assert not any(m["verdict"] == "improvement" for m in metrics.values())
    assert metrics["failures"]["verdict"] == "regression"
    assert res.exit_code == 1


def test_torchruns_failure_summary_gives_each_rank_its_own_exit(files):
    text = (files / "fsdp4-kill-captured-rank2" / "torch_logs.txt").read_text()
    # ChildFailedError's summary, as torchrun printed it (the hunt's torchrun.err says the same)
    assert rank_exits(text.splitlines()) == {
        0: {"exit_code": -15, "pid": 3630, "local_rank": 0}, 1: {"exit_code": -15, "pid": 3631, "local_rank": 1},
        2: {"exit_code": -9, "pid": 3632, "local_rank": 2}, 3: {"exit_code": -15, "pid": 3633, "local_rank": 3}}
    assert rank_exits(["rank      : 1 (local_rank: 1)", "W1128 a line of no exit code"]) == {}


def test_a_captured_ranks_exit_is_its_own_not_torchruns(files, tmp_path):
    db = str(tmp_path / "w.duckdb")
    ingest_paths([files / "fsdp4-kill-captured-rank2"], db)
    with reader(db) as con:
        [(rank, pid, why, code, job_code)] = con.execute(
            "SELECT rank, pid, run_unfinished(labels), labels ->> 'exit_code', labels ->> 'job_exit_code' "
            "FROM runs").fetchall()
    assert (rank, pid) == (2, 3632)  # the trace file's rank, the debug folder's pid
    assert (code, job_code, why) == ("-9", "1", "exit -9")


def test_the_ingest_summary_names_error_files_where_they_are(tmp_path):
    with tarfile.open(KILL / "fsdp4-kill-captured-ranks23.tar.xz") as tar:
        tar.extractall(tmp_path, filter="data")
    job = tmp_path / "fsdp4-kill-captured-ranks23"
    res = CliRunner().invoke(cli, ["--db", str(tmp_path / "w.duckdb"), "ingest", str(job)])
    named = [line.split(": [", 1)[0].removeprefix("error: ") for line in res.output.splitlines()
             if line.startswith("error: ")]
    # both ranks were killed in compile 0/1: their model__1_forward_4.1 folders hold no output_code.py
    assert len(named) == 4 and all(p.endswith("model__1_forward_4.1/output_code.py") or "ir_p" in p for p in named)
    for path in named:
        assert path.startswith(f"{job}/torch_compile_debug/run_") and (tmp_path / path).parent.is_dir()
