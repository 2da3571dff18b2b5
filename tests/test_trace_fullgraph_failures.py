"""A graph break under `fullgraph=True` or `error_on_graph_break(True)` raises to the caller: the
frame never ran eagerly (torch 2.13 CPU captures of the kinds hunt, cut to the failing compile's
records), while a frame Dynamo skipped after a break it could not handle did."""

from __future__ import annotations

import re
import tarfile

from inductor_warehouse.ingest.parsers.torch_trace import parse_torch_trace
from tests.conftest import FIXTURES

KINDS = FIXTURES / "kinds_2.13"


def _failures(path):
    parsed = parse_torch_trace(open(path, "rb"))
    return [(e["compile_id"], e["fallback"]) for e in parsed.rows["compile_events"] if e["kind"] == "failure"]


def test_fullgraph_and_error_on_graph_break_failures_did_not_fall_back():
    for case, cid in (("fullgraph", "1/0"), ("egb", "0/0")):
        (log,) = (KINDS / case).glob("*.log")
        text = log.read_text()
        # the compile failed with Unsupported, and no record says Dynamo skipped the frame
        assert re.search(r'"compilation_metrics".*"fail_type": "Unsupported"', text)
        assert "falling back to eager" not in text
        assert _failures(log) == [(cid, False)]


def test_a_skipped_frame_of_2_13_still_fell_back(tmp_path):
    """Reformer under the harness (tests/fixtures/SOURCES.md): 11/0 failed with Unsupported after a
    `Failed to handle graph break gracefully` record; the harness's CSV counts 1 fallback to eager."""
    with tarfile.open(FIXTURES / "captures" / "harness-reformer.tar.xz") as tf:
        tf.extractall(tmp_path, filter="data")
    (log,) = tmp_path.glob("cpu-torch2.13/accuracy/Reformer/trace/*.log")
    assert "Failed to handle graph break gracefully" in log.read_text()
    assert _failures(log) == [("11/0", True)]
