"""A TORCH_COMPILE_DEBUG run folder is a run by what it holds, whatever it is called: Inductor
writes `<folder>/torchinductor/<graph>/` into a `run_<time>-pid_<pid>` folder or into
`config.trace.debug_dir`, and people rename the first when they commit it. Only the name's time and
pid are lost (NULL, unless a trace log of the same process lies in the folder and says them)."""

from __future__ import annotations

import re
import shutil

import pytest

from inductor_warehouse.ingest.discover import discover
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

TREES = FIXTURES / "renamed_debug_tree" / "HeyDavid633__EuroSys25-test" / "torch_compile_debug"
FWD = TREES / "fwd_default_info"
ATTN = TREES / "attn" / "run_attn_compile_default_2024_09_16"
LOGGED = FIXTURES / "runs" / "cpu-torch2.13" / "transformer"


def _triton_kernels(folder):
    """Kernel definitions in each graph's output_code.py, read with a regex of our own."""
    return sum(len(re.findall(r"^\w+ = async_compile\.triton\(", p.read_text(), re.M))
               for p in folder.glob("torchinductor/*/output_code.py"))


def _torch_version(folder):
    text = next(folder.glob("torchinductor/*/fx_graph_runnable.py")).read_text()
    return re.search(r"^# torch version: (\S+)$", text, re.M).group(1)


def _rows(db, sql):
    con = reader(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_renamed_run_folders_are_runs_and_skip_nothing(tmp_path):
    root = tmp_path / "torch_compile_debug"
    shutil.copytree(TREES, root)
    found = discover([root])
    assert sorted(str(r.root.relative_to(root)) for r in found.runs) == [
        "attn/run_attn_compile_default_2024_09_16", "fwd_default_info"]
    assert dict(found.skipped) == {}
    fwd = next(r for r in found.runs if r.root.name == "fwd_default_info")
    # Dynamo's and AOT's debug logs belong to the run as they do in a run_<time>-pid_<pid> folder
    assert {a.path.relative_to(root / "fwd_default_info").as_posix() for a in fwd.artifacts if a.kind == "other"} == {
        "torchdynamo/debug.log", "torchinductor/aot_model___0_debug.log"}


@pytest.mark.parametrize("folder", [FWD, ATTN], ids=["fwd_default_info", "attn"])
def test_a_renamed_run_reads_as_its_files_say(tmp_path, folder):
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([folder], db)
    (run,) = _rows(db, "SELECT r.source_path, r.model, r.compiler_version, r.device, r.started_at, r.pid, "
                       "m.graphs, m.kernel_count FROM runs r JOIN run_metrics m USING (run_id)")
    kernels = _triton_kernels(folder)
    assert kernels == (5 if folder == FWD else 3)  # the hunt's count (tools/oc.py)
    # nothing in the folder says when or by which process it was written
    assert run == (str(folder), folder.name, _torch_version(folder), "cuda", None, None, 1, kernels)
    assert _rows(db, "SELECT count(*) FROM ingest_errors") == [(0,)]


def test_renaming_a_run_folder_keeps_its_run(tmp_path):
    named = tmp_path / "torch_compile_debug" / "run_2024_09_17_10_11_12_000013-pid_4242"
    shutil.copytree(FWD, named)
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([FWD], db)
    ingest_paths([named], db)
    # the same files under the folder's first name: one run, as any copy of a run is
    assert _rows(db, "SELECT count(*), min(pid), min(started_at)::VARCHAR FROM runs") == [
        (1, None, None)]
    db2 = str(tmp_path / "named.duckdb")
    ingest_paths([named], db2)
    assert _rows(db2, "SELECT pid, started_at::VARCHAR FROM runs") == [(4242, "2024-09-17 10:11:12.000013")]
    assert _rows(db2, "SELECT run_id FROM runs") == _rows(db, "SELECT run_id FROM runs")


def test_a_renamed_folder_joins_the_log_inside_it(tmp_path):
    """A trace log in the renamed folder that holds the same code is the same process: one run,
    whose pid and start time the log says."""
    folder = tmp_path / "my_transformer_debug"
    shutil.copytree(next((LOGGED / "torch_compile_debug").glob("run_*-pid_*")), folder)
    log = next((LOGGED / "trace").glob("dedicated_log_torch_trace_*.log"))
    shutil.copy(log, folder / log.name)
    (run,) = discover([tmp_path]).runs
    assert run.root == folder and {a.kind for a in run.artifacts} >= {"torch_trace", "output_code"}
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([tmp_path], db)
    first = log.read_text().split("\n", 1)[0]
    pid = int(re.match(r"^\S+ \S+ (\d+) ", first).group(1))  # the glog prefix's pid
    assert _rows(db, "SELECT count(*), min(pid), min(source_path) FROM runs") == [(1, pid, str(folder))]


def test_a_log_beside_a_renamed_folder_of_another_process_stays_apart(tmp_path):
    """A log whose code is not the folder's is another process, though it lies in the folder."""
    shutil.copytree(FWD, tmp_path / "fwd")
    log = next((LOGGED / "trace").glob("dedicated_log_torch_trace_*.log"))
    shutil.copy(log, tmp_path / "fwd" / log.name)
    runs = discover([tmp_path]).runs
    assert sorted((r.root.name, r.root_is_log) for r in runs) == sorted([("fwd", False), (log.name, True)])
