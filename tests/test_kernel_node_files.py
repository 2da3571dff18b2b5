"""The kernel -> post-grad node file of a debug tree's graph folder (2.7's
`inductor_triton_kernel_to_post_grad_nodes.json`, 2.8's `inductor_generated_kernel_to_post_grad_nodes.json`):
`{kernel: [post-grad nodes]}`, the very dict the node mappings give as `cppCodeToPost` (PyTorch's
torch/_inductor/debug.py), which are written only when a pre-grad graph was recorded. Without node
mappings it gives the kernels' lineage; beside them it adds nothing, and is no skipped file."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tarfile

import pytest

from inductor_warehouse.ingest.discover import discover
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

GPU = FIXTURES / "captures" / "gpu-torch2.11-provenance.tar.xz"
OLD = FIXTURES / "captures" / "cpu-torch2.3-2.7-old-releases.tar.xz"
MAPPINGS = "inductor_provenance_tracking_node_mappings.json"
FILES = ("inductor_triton_kernel_to_post_grad_nodes.json", "inductor_generated_kernel_to_post_grad_nodes.json")


@pytest.fixture(scope="module")
def gpu_run(tmp_path_factory):
    """The real 2.11 GPU run of Triton kernels (combo kernels) and its node mappings, without its trace
    log: a debug tree alone."""
    root = tmp_path_factory.mktemp("kernel_nodes")
    with tarfile.open(GPU) as tf:
        tf.extractall(root, filter="data")
    run = next(root.rglob("combo_kernels"))
    shutil.rmtree(run / "trace")
    return run


def _lineage(db):
    with reader(db) as con:
        return sorted(con.execute("SELECT graph_id, source_node, post_grad_node, kernel_name, debug_handle FROM lineage "
                                  "WHERE source = 'provenance'").fetchall(), key=repr)


def _split(key):
    name, _, handle = key.rpartition(":")
    return (name, int(handle)) if handle.isdigit() else (key, None)


@pytest.mark.parametrize("name", FILES)
def test_without_node_mappings_the_kernel_file_gives_the_kernels_lineage(gpu_run, tmp_path, name):
    mappings = {p.parent.name: json.loads(p.read_text()) for p in gpu_run.rglob(MAPPINGS)}
    assert any(m["cppCodeToPost"] for m in mappings.values())
    alone = tmp_path / "run"
    shutil.copytree(gpu_run, alone)
    for p in list(alone.rglob(MAPPINGS)):
        # what the release writes beside the mappings, and alone when it records no pre-grad graph
        (p.parent / name).write_text(json.dumps(json.loads(p.read_text())["cppCodeToPost"]))
        p.unlink()
    db = str(tmp_path / "wh.duckdb")
    summary = ingest_paths([alone], db)
    assert summary.errors == 0 and "unrecognised file" not in summary.skipped_files
    got = _lineage(db)
    assert {r[1] for r in got} == {None}  # the file names no pre-grad node
    expected = {(post, *_split(kernel)) for m in mappings.values() for kernel, posts in m["cppCodeToPost"].items()
                for post in posts}
    assert {(r[2], r[3], r[4]) for r in got} == expected
    assert len(got) == len(expected)


def test_beside_node_mappings_the_kernel_file_changes_no_row(gpu_run, tmp_path):
    db_before = str(tmp_path / "before.duckdb")
    ingest_paths([gpu_run], db_before)
    both = tmp_path / "both"
    shutil.copytree(gpu_run, both)
    for p in both.rglob(MAPPINGS):
        (p.parent / FILES[0]).write_text(json.dumps(json.loads(p.read_text())["cppCodeToPost"]))
    db = str(tmp_path / "wh.duckdb")
    summary = ingest_paths([both], db)
    assert summary.errors == 0 and "unrecognised file" not in summary.skipped_files
    before = _lineage(db_before)
    assert before and _lineage(db) == before
    # the mappings' kernels are the file's: the rows it would give alone are the mappings' own
    assert {r[2:] for r in before if r[3] is not None} >= {
        (post, *_split(k)) for p in both.rglob(FILES[0]) for k, posts in json.loads(p.read_text()).items()
        for post in posts}


def test_the_real_2_7_files_are_read_not_skipped(tmp_path):
    """2.7's CPU runs write the file (empty: 2.7 tracks Triton kernels only) beside the node mappings."""
    with tarfile.open(OLD) as tf:
        tf.extractall(tmp_path, filter="data", members=[m for m in tf.getmembers() if "2.7.1" in m.name])
    runs = next(tmp_path.rglob("cpu-torch2.7.1"))
    files = sorted(runs.rglob(FILES[0]))
    assert len(files) == 10 and all(json.loads(f.read_text()) == {} for f in files)
    assert not set(map(str, files)) & set(discover([runs]).skipped.paths.get("unrecognised file", []))
    db = str(tmp_path / "wh.duckdb")
    assert ingest_paths([runs], db).errors == 0
    with reader(db) as con:
        kinds = dict(con.execute("SELECT path, kind FROM artifacts WHERE path LIKE '%kernel_to_post_grad_nodes.json'")
                     .fetchall())
    assert len(kinds) == 10 and set(kinds.values()) == {"provenance"}


# ---- the trace's twin: 2.7's artifact of the same name, logged just before the node mappings ----------

MAPPING_RECORD = '"name": "inductor_provenance_tracking_node_mappings"'


def _record(header: str, payload: str) -> list[str]:
    """A glog record: its header line with has_payload the md5 of `payload` (TorchLogsFormatter's)."""
    md5 = hashlib.md5(payload.encode()).hexdigest()
    return [re.sub(r'"has_payload": "[0-9a-f]+"', f'"has_payload": "{md5}"', header)] + \
        ["\t" + line for line in payload.split("\n")]


def _as_2_7(log: str, mappings_written: bool) -> tuple[str, list[dict]]:
    """The log as 2.7 writes it: before each node mappings record, the kernel -> post-grad node
    artifact (their `cppCodeToPost`, graph.py at 2.7); the mappings `{}` where no pre-grad graph was
    recorded. With the kernel dicts, for an independent reading."""
    lines, out, kernels = log.split("\n"), [], []
    i = 0
    while i < len(lines):
        line = lines[i]
        if MAPPING_RECORD not in line:
            out.append(line)
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].startswith("\t"):
            j += 1
        mapping = json.loads("\n".join(x[1:] for x in lines[i + 1:j]))
        kernels.append(mapping["cppCodeToPost"])
        out += _record(line.replace("inductor_provenance_tracking_node_mappings",
                                    "inductor_triton_kernel_to_post_grad_nodes"), json.dumps(mapping["cppCodeToPost"]))
        out += lines[i:j] if mappings_written else _record(line, "{}")
        i = j
    return "\n".join(out), kernels


def _trace_lineage(tmp_path, text, name):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "dedicated_log_torch_trace_x.log").write_text(text)
    db = str(tmp_path / f"{name}.duckdb")
    summary = ingest_paths([folder], db)
    assert summary.errors == 0, summary.error_rows
    with reader(db) as con:
        return con.execute("SELECT source_node, post_grad_node, kernel_name, debug_handle FROM lineage "
                           "WHERE source = 'provenance'").fetchall()


def test_a_2_7_trace_without_node_mappings_gets_the_kernels_lineage_from_its_artifact(tmp_path):
    """The real 2.11 GPU trace, made 2.7's: the node mappings logged empty, the kernels said by the
    artifact before them. Its lineage: each (post-grad node, kernel) of the artifact, once; beside full
    mappings the artifact changes no row."""
    log = next((_with_trace(tmp_path) / "trace").glob("*.log")).read_text()
    assert log.count(MAPPING_RECORD) == 1
    empty, kernels = _as_2_7(log, mappings_written=False)
    got = _trace_lineage(tmp_path, empty, "empty")
    expected = {(post, *_split(k)) for d in kernels for k, posts in d.items() for post in posts}
    assert expected and {r[1:] for r in got} == expected and len(got) == len(expected)
    assert {r[0] for r in got} == {None}
    full, _ = _as_2_7(log, mappings_written=True)
    assert sorted(_trace_lineage(tmp_path, full, "full"), key=repr) == \
        sorted(_trace_lineage(tmp_path, log, "original"), key=repr)


def _with_trace(tmp_path):
    """The archive's combo-kernels run with its trace log."""
    root = tmp_path / "archive"
    with tarfile.open(GPU) as tf:
        tf.extractall(root, filter="data", members=[m for m in tf.getmembers() if "/combo_kernels" in m.name])
    return next(root.rglob("combo_kernels"))
