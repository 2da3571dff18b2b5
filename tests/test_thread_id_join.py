"""A TORCH_COMPILE_DEBUG folder and the TORCH_TRACE log of the same 2.3/2.4 process, with no manifest,
are one run. Those releases' log names the thread, not the pid, so the folder's `pid_<N>` cannot
join them; the code Inductor wrote to both (output_code.py, `inductor_output_code`) does.

The captures are tests/fixtures/captures/cpu-torch2.3-2.7-old-releases.tar.xz (SOURCES.md) with
their manifest and TORCH_LOGS taken away; Dynamo's own counters (ground_truth.json) say how many
graphs each process compiled.
"""

from __future__ import annotations

import json
import re
import shutil
import tarfile

import pytest

from inductor_warehouse.ingest.discover import discover
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

ARCHIVE = FIXTURES / "captures" / "cpu-torch2.3-2.7-old-releases.tar.xz"
OLD = ("2.3.1", "2.4.1")
WORKLOADS = ("gbreak_dyn", "cnn_train", "mlp_tf_infer")
_GLOG_PROCESS = re.compile(r"^V\d{4} [\d:.]+ (\d+) ", re.M)


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    """The 2.3/2.4 captures, each its debug folder and its trace log alone."""
    root = tmp_path_factory.mktemp("thread-id")
    with tarfile.open(ARCHIVE) as tf:
        tf.extractall(root / "x", filter="data")
    for version in OLD:
        for w in WORKLOADS:
            d = root / version / w
            shutil.copytree(root / "x" / f"cpu-torch{version}" / w, d)
            (d / "manifest.json").unlink()
            (d / "torch_logs.txt").unlink()
    return root


def test_the_old_logs_name_a_thread_not_the_folder_s_pid(bare):
    for version in OLD:
        for w in WORKLOADS:
            d = bare / version / w
            (folder,) = (d / "torch_compile_debug").iterdir()
            pid = int(folder.name.rpartition("pid_")[2])
            (log,) = (d / "trace").glob("*.log")
            assert {int(p) for p in _GLOG_PROCESS.findall(log.read_text())} != {pid}


def test_a_debug_folder_and_the_log_of_one_old_process_are_one_run(bare):
    folders = [bare / v / w for v in OLD for w in WORKLOADS]
    db = str(bare / "wh.duckdb")
    # all at once: six processes' folders and logs, all begun within minutes, each finds its own
    assert ingest_paths(folders, db).runs == len(folders)
    with reader(db) as con:
        for d in folders:
            truth = json.loads((d / "ground_truth.json").read_text())
            graphs = truth["counters"]["stats"]["unique_graphs"] * (2 if "train" in d.name else 1)
            (folder,) = (d / "torch_compile_debug").iterdir()
            row = con.execute(
                "SELECT r.pid, m.graphs, (SELECT count(*) FROM artifacts a WHERE a.run_id = r.run_id AND a.kind = 'torch_trace'),"
                " (SELECT count(*) FROM graphs g WHERE g.run_id = r.run_id AND g.compile_id IS NULL)"
                " FROM runs r JOIN run_metrics m USING (run_id) WHERE r.source_path = ?", [str(d)]).fetchone()
            # the folder's pid, as many graphs as Dynamo compiled (not twice), each with its compile id
            assert row == (int(folder.name.rpartition("pid_")[2]), graphs, 1, 0), d


def test_processes_of_the_same_code_are_left_apart(bare, tmp_path):
    """Two debug folders holding the same code (torchrun's ranks compile the same model) and one log:
    the code cannot say whose log it is, so the log stays a run of its own."""
    d = tmp_path / "ranks"
    shutil.copytree(bare / "2.4.1" / "mlp_tf_infer", d)
    (folder,) = (d / "torch_compile_debug").iterdir()
    pid = int(folder.name.rpartition("pid_")[2])
    shutil.copytree(folder, folder.with_name(folder.name.replace(f"pid_{pid}", f"pid_{pid + 1}")))
    runs = discover([d]).runs
    assert len(runs) == 3
    assert sorted(len([a for a in r.artifacts if a.kind == "torch_trace"]) for r in runs) == [0, 0, 1]
