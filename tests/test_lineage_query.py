"""The canned lineage query: each model source line with the kernels it became."""

from __future__ import annotations

import json
import re
import shutil
import tarfile

import pytest

from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.store.api import Warehouse
from tests.conftest import FIXTURES, kernel_stack_frames

RUN = FIXTURES / "runs" / "cpu-torch2.13" / "transformer"


def expected_from_trace_log() -> dict[tuple[str, int], set[str]]:
    """Innermost model frame of every kernel's stack, read straight from the log's payloads."""
    out: dict[tuple[str, int], set[str]] = {}
    for kernel, frames in kernel_stack_frames(next((RUN / "trace").glob("*.log"))):
        model = [f for f in frames if f[0].endswith("gen_models.py")]
        if model:
            out.setdefault(model[-1], set()).add(kernel)
    return out


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("lineage") / "wh.duckdb")
    summary = ingest_paths([RUN], db)
    with Warehouse(db) as w:
        yield w, summary.run_ids[0]


def test_each_model_line_lists_the_kernels_it_became(wh):
    w, run_id = wh
    df = w.query("lineage/source_line_kernels", run=run_id[:8])
    got = {(r["file"], r["line"]): set(r["kernel_names"]) for r in df.iter_rows(named=True)}
    expected = expected_from_trace_log()
    assert got == expected and len(expected) >= 8
    row = df.filter(df["line"] == 25).row(0, named=True)
    assert "scaled_dot_product_attention" in row["source_code"]


def test_filters_by_file_and_line(wh):
    w, run_id = wh
    one = w.query("lineage/source_line_kernels", run=run_id, file="gen_models", line=28)
    assert one["line"].to_list() == [28]
    assert w.query("lineage/source_line_kernels", run=run_id, file="no_such_file").height == 0


def test_without_a_trace_the_node_mappings_and_fx_comments_answer(tmp_path):
    shutil.copytree(RUN, tmp_path / "run")
    shutil.rmtree(tmp_path / "run" / "trace")
    db = str(tmp_path / "wh.duckdb")
    run_id = ingest_paths([tmp_path / "run"], db).run_ids[0]
    with Warehouse(db) as w:
        df = w.query("lineage/source_line_kernels", run=run_id)
    # independently: post-grad nodes under each `# File: ...gen_models.py:N` comment of the forward graph,
    # mapped to kernels by the forward graph's provenance JSON
    fwd = next(RUN.rglob("model__0_forward_*"))
    mapping = json.loads((fwd / "inductor_provenance_tracking_node_mappings.json").read_text())["postToCppCode"]
    expected: dict[int, set[str]] = {}
    current = None
    for line in (fwd / "fx_graph_readable.py").read_text().splitlines():
        m = re.search(r"# File: \S+gen_models\.py:(\d+)", line)
        if m:
            current = int(m.group(1))
        elif line.strip().startswith("#"):
            current = None
        node = re.match(r"^        (\w+)(?:: \"[^\"]*\")? = ", line)
        if node and current is not None:
            for k in mapping.get(node.group(1), []):
                expected.setdefault(current, set()).add(k.rsplit(":", 1)[0])
    got = {r["line"]: set(r["kernel_names"]) for r in df.iter_rows(named=True) if "0_forward" in r["graphs"]}
    for line, kernels in expected.items():
        assert kernels <= got[line]
    assert expected


def test_a_model_in_an_installed_package_is_the_model_s_code(tmp_path):
    """The benchmark harness compiles its own `forward_pass`, whose one line calls a timm model that
    lives in site-packages: each kernel's line is the model's (timm's) innermost frame, never the
    harness's `mod(*inputs)` line."""
    from tests.conftest import HARNESS_CAPTURES

    run = "gpu-torch2.11/default/performance/mobilenetv2_100"
    with tarfile.open(HARNESS_CAPTURES) as tf:
        tf.extractall(tmp_path, members=[m for m in tf.getmembers() if m.name.startswith(run + "/")], filter="data")
    # independently: the innermost frame of every kernel's stacks in the log's payloads
    stacks = kernel_stack_frames(next((tmp_path / run / "trace").glob("*.log")))
    expected = {(kernel, *frames[-1]) for kernel, frames in stacks}
    outer = {frames[0][0] for _, frames in stacks}
    assert [f.rsplit("/", 1)[-1] for f in outer] == ["timm_models.py"]  # the harness's frame
    db = str(tmp_path / "wh.duckdb")
    run_id = ingest_paths([tmp_path / run], db).run_ids[0]
    with Warehouse(db) as w:
        got = set(w.sql("SELECT kernel_name, user_file, user_line FROM lineage WHERE run_id = ? "
                        "AND source = 'torch_trace'", [run_id]).iter_rows())
    assert got == expected and len({f for _, f, _ in got}) > 1
    assert all("/site-packages/timm/" in f for _, f, _ in got)
