"""A run compiled with a backend other than Inductor (torch 2.13 CPU: the kinds hunt's `aot_eager`
capture, and a custom backend `def my_backend(gm, example_inputs): return gm.forward`) has the graphs
Dynamo compiled, one a compile id with compilation_metrics, whose kernel counts do not apply: NULL
with the reason, never a confident 0, in the run's figures and in the kernel trend beside an
Inductor run of the same model."""

from __future__ import annotations

import gzip
import json

import pytest
from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.ingest.parsers.torch_trace import NOT_INDUCTOR, OTHER_BACKEND, parse_torch_trace
from tests.conftest import FIXTURES, reader

KINDS = FIXTURES / "kinds_2.13"
CASES = {"aot_eager": KINDS / "aot_eager", "custom": KINDS / "custom_backend"}


def _backend_compiles(text: str) -> list[str]:
    """The compile ids whose compilation_metrics say a graph went to a backend and Inductor timed nothing."""
    out = []
    for line in text.splitlines():
        if '{"compilation_metrics"' not in line:
            continue
        m = json.loads(line[line.index("] {") + 2:])["compilation_metrics"]
        if m["backend_compile_time_s"] is not None and m["inductor_compile_time_s"] is None:
            out.append(m["compile_id"])
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_graphs_of_another_backend_are_kept_with_kernel_counts_not_applicable(tmp_path, case):
    (log,) = CASES[case].glob("*.log")
    text = log.read_text()
    assert "inductor_output_code" not in text and "inductor_post_grad_graph" not in text
    compiles = _backend_compiles(text)
    assert compiles == ["0/0", "1/0"]
    parsed = parse_torch_trace(open(log, "rb"))
    assert [(g["compile_id"], g["kernel_count"], g["unknown_because"]) for g in parsed.rows["graphs"]] == [
        (c, None, NOT_INDUCTOR) for c in compiles]
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([CASES[case]], db, model="f")
    assert s.errors == 0
    assert reader(db).execute("SELECT graphs, kernel_count, extern_kernel_count, backend, graph_breaks FROM run_metrics"
                              ).fetchall() == [(2, None, None, OTHER_BACKEND, text.count('"dynamo_graph_break_reason"'))]


def test_the_kernel_trend_does_not_read_another_backends_run_as_no_kernels(tmp_path):
    """An Inductor run of model f (the 2.14.1 compiled-autograd capture) and the aot_eager run of f:
    the aot_eager run's kernels are NULL, and no delta is made from or against it."""
    inductor = tmp_path / "inductor" / "trace"
    inductor.mkdir(parents=True)
    src = next((FIXTURES / "torch_trace" / "cpu-torch2.14.1-ca").glob("*.log.gz"))
    (inductor / "dedicated_log_torch_trace_x.log").write_bytes(gzip.decompress(src.read_bytes()))
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([inductor.parent], db, model="f")
    ingest_paths([CASES["aot_eager"]], db, model="f")
    rows = dict(reader(db).execute("SELECT backend, kernel_count FROM run_metrics").fetchall())
    assert rows[OTHER_BACKEND] is None and rows["cpp"] > 0
    res = CliRunner().invoke(cli, ["--db", db, "query", "kernels/kernel_count_trend", "-p", "model=f", "--format", "json"])
    trend = json.loads(res.output)
    assert sorted((r["kernels"] is None, r["kernels_delta"]) for r in trend) == [(False, None), (True, None)]
