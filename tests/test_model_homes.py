"""Where a model's code lives does not change what is the model's: a model in torch.hub's cache
($TORCH_HOME/hub/..., a folder named `torch` that is not torch's), called from a user's compiled function
(tests/fixtures/captures/hub-model.tar.xz, tests/fixtures/SOURCES.md). Expected values are read straight
from the trace log's records."""

from __future__ import annotations

import json
import re
import tarfile

import pytest

from inductor_warehouse.analysis.canned_rows import run_query
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, kernel_stack_frames, reader

@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("hub")
    with tarfile.open(FIXTURES / "captures" / "hub-model.tar.xz") as tf:
        tf.extractall(root, filter="data")
    run = root / "cpu-torch2.13" / "hub_model"
    db = str(root / "wh.duckdb")
    assert ingest_paths([run], db).errors == 0
    records = []  # (envelope, payload) of every record of the log
    for line in next((run / "trace").glob("*.log")).read_text().splitlines():
        if line.startswith("\t"):
            records[-1][1].append(line[1:])
        elif "] {" in line:
            records.append((json.loads(line.split("] ", 1)[1]), []))
    return run, db, records


def test_a_hub_model_s_graph_breaks_are_the_model_s(hub):
    run, db, records = hub
    counted = sum(json.loads((run / "ground_truth.json").read_text())["graph_break"].values())
    at = [re.search(r"Graph break in user code at (\S+):(\d+)", "\n".join(p))
          for e, p in records if e.get("artifact", {}).get("name") == "dynamo_graph_break_reason"]
    expected = sorted((m.group(1), int(m.group(2))) for m in at if m)
    with reader(db) as con:
        got = con.execute("SELECT user_file, user_line, origin FROM compile_events WHERE kind = 'graph_break' "
                          "ORDER BY ALL").fetchall()
    assert [(f, n) for f, n, _ in got] == expected and len(got) == counted >= 1
    assert all("/.cache/torch/hub/" in f and o == "model" for f, _, o in got)


def test_a_hub_model_s_kernels_are_its_lines(hub):
    run, db, records = hub
    expected = set()
    for kernel, frames in kernel_stack_frames(next((run / "trace").glob("*.log"))):
        model = [f for f in frames if "/site-packages/torch/" not in f[0]]
        expected.add((kernel, *model[-1]))
    with reader(db) as con:
        got = set(con.execute("SELECT kernel_name, user_file, user_line FROM lineage "
                              "WHERE source = 'torch_trace'").fetchall())
    assert got == expected
    assert {f.rsplit("/", 1)[-1] for _, f, _ in got} == {"tinycnn.py", "hub_model.py"}


def test_a_restarted_attempt_s_shape_events_are_not_the_compile_s(hub):
    """Dynamo restarts a frame's compile (1/0 goes on as 1/0_1) and throws the first attempt's shape
    environment away: the specializations counted are those of each frame's last attempt."""
    run, db, records = hub
    last: dict[tuple, int] = {}
    for envelope, _ in records:
        if "frame_id" in envelope:
            key = (envelope["frame_id"], envelope["frame_compile_id"])
            last[key] = max(last.get(key, 0), envelope.get("attempt", 0))
    kept = sorted(e["symbolic_shape_specialization"]["symbol"] for e, _ in records
                  if "symbolic_shape_specialization" in e
                  and e.get("attempt", 0) == last[(e["frame_id"], e["frame_compile_id"])])
    every = [e for e, _ in records if "symbolic_shape_specialization" in e]
    assert len(every) > len(kept) >= 1  # the capture restarted where it specialised
    with reader(db) as con:
        rows = run_query(con, "shapes/specializations")
        counts = run_query(con, "shapes/specializations_by_model")
    assert sorted(r["symbol"] for r in rows) == kept
    assert [r["specializations"] for r in counts] == [len(kept)]
