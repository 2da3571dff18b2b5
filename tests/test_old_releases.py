"""Debug trees of torch 2.3 and 2.4 (and 2.5, 2.7 as a guard): graphs joined to the trace, fused
members and layouts as the files say them.

The captures (tests/fixtures/captures/cpu-torch2.3-2.7-old-releases.tar.xz, SOURCES.md) ran under
`iwh capture` with the PyPI wheels of torch 2.3.1, 2.4.1, 2.5.1 and 2.7.1 on CPU: a module with a
print graph break, a `.item()` branch and dynamic recompiles (gbreak_dyn), a small CNN trained
forward and backward (cnn_train), an MLP and a transformer block under no_grad (mlp_tf_infer).
Each wrote Dynamo's counters and Inductor's metrics, read in-process, to ground_truth.json. The
warehouse is checked against those and against the files read here with a few regexes, apart
from the parsers.
"""

from __future__ import annotations

import json
import re
import tarfile
from collections import Counter
from pathlib import Path

import pytest

from inductor_warehouse.ingest.parsers import output_code
from tests.conftest import FIXTURES, reader

ARCHIVE = FIXTURES / "captures" / "cpu-torch2.3-2.7-old-releases.tar.xz"
RELEASES = ("2.3.1", "2.4.1", "2.5.1", "2.7.1")
WORKLOADS = ("gbreak_dyn", "cnn_train", "mlp_tf_infer")
RUNS = [(v, w) for v in RELEASES for w in WORKLOADS]
TRAINED = {"cnn_train"}  # one Dynamo graph, two Inductor graphs (forward, backward)

_DEFINITION = re.compile(r"^\w+ = async_compile\.cpp(?:_pybinding)?\(", re.M)
_HEADER = re.compile(r"^(\w+): \w+\(")
_MEMBER_LINK = re.compile(r"^\s*(\w+)\.snodes\[\d+\] =$", re.M)
_LAYOUT_LINE = re.compile(r"^\s*(\w+?)(?:_layout|\.layout) = ", re.M)
_OUTPUT_CODE_RECORD = re.compile(r'^\S+ \S+ \d+ \S+\] \{"inductor_output_code".*$', re.M)


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    from inductor_warehouse.ingest.load import ingest_paths

    root = tmp_path_factory.mktemp("old-releases")
    with tarfile.open(ARCHIVE) as tf:
        tf.extractall(root, filter="data")
    db = str(root / "wh.duckdb")
    summary = ingest_paths(sorted(root.glob("cpu-torch*")), db)
    assert summary.runs == len(RUNS), summary.line()
    return root, db


def _run(root: Path, version: str, workload: str) -> Path:
    return root / f"cpu-torch{version}" / workload


def _graph_folders(run: Path) -> list[Path]:
    return sorted(p for p in run.glob("torch_compile_debug/run_*/torchinductor/*") if p.is_dir())


def _run_id(con, run: Path) -> str:
    (run_id,) = con.execute("SELECT run_id FROM runs WHERE source_path = ?", [str(run)]).fetchone()
    return run_id


def _trace_compile_ids(run: Path) -> set[str]:
    """The compile ids of the trace's inductor_output_code records that name one, as the warehouse
    writes them (`<frame>/<compile>`, `_<attempt>` after a restart)."""
    text = next((run / "trace").glob("*.log")).read_text()
    ids = set()
    for line in _OUTPUT_CODE_RECORD.findall(text):
        env = json.loads(line[line.index("{"):])
        if "frame_id" in env:
            attempt = f"_{env['attempt']}" if env.get("attempt") else ""
            ids.add(f"{env['frame_id']}/{env['frame_compile_id']}{attempt}")
    return ids


@pytest.mark.parametrize(("version", "workload"), RUNS)
def test_each_graph_once_with_its_compile_id(captured, version, workload):
    """One graph per debug-tree folder, as many as Dynamo's unique graphs (a forward and a backward
    for the trained one), each with the compile id the trace gives its code: the trace's copy of a
    folder's code is not a second graph (2.4 starts the code with a blank line before `# AOT ID`,
    2.3 writes no AOT ID and names its first folder `model___<n>.0`)."""
    root, db = captured
    run = _run(root, version, workload)
    truth = json.loads((run / "ground_truth.json").read_text())
    folders = _graph_folders(run)
    want = truth["counters"]["stats"]["unique_graphs"] * (2 if workload in TRAINED else 1)
    assert len(folders) == want
    with reader(db) as con:
        rid = _run_id(con, run)
        rows = con.execute("SELECT folder, source, compile_id FROM graphs WHERE run_id = ?", [rid]).fetchall()
        (graphs,) = con.execute("SELECT graphs FROM run_metrics WHERE run_id = ?", [rid]).fetchone()
    assert sorted(r[0] for r in rows) == [f.name for f in folders]
    assert {r[1] for r in rows} == {"debug_tree"}
    assert graphs == want
    assert all(r[2] is not None for r in rows), rows
    assert {r[2] for r in rows} == _trace_compile_ids(run)


@pytest.mark.parametrize(("version", "workload"), RUNS)
def test_kernels_counted_once(captured, version, workload):
    """Generated kernels: the `= async_compile.cpp(` definitions of the folders' output_code.py, and
    Inductor's own count where no other compile of the process adds to it (the pattern matcher's
    traces of a training run's first compile do)."""
    root, db = captured
    run = _run(root, version, workload)
    defined = sum(len(_DEFINITION.findall((f / "output_code.py").read_text())) for f in _graph_folders(run))
    with reader(db) as con:
        rid = _run_id(con, run)
        (kernels,) = con.execute("SELECT kernel_count FROM run_metrics WHERE run_id = ?", [rid]).fetchone()
        (rows,) = con.execute("SELECT count(*) FROM kernels WHERE run_id = ? AND generated", [rid]).fetchone()
    assert kernels == rows == defined
    if workload == "gbreak_dyn":
        truth = json.loads((run / "ground_truth.json").read_text())
        assert kernels == truth["inductor_metrics"]["generated_kernel_count"]


@pytest.mark.parametrize(("version", "workload"), RUNS)
def test_fused_members_and_layouts_as_the_ir_says(captured, version, workload):
    """Each fused node's members are its `<node>.snodes[i] =` lines (indented 4 spaces before 2.5,
    unindented after), and a graph's layouts the buffers its `_layout =` / `.layout =` lines name
    (none in 2.3's IR)."""
    root, db = captured
    run = _run(root, version, workload)
    with reader(db) as con:
        rid = _run_id(con, run)
        fused = {(folder, g): n for folder, g, n in con.execute(
            "SELECT g.folder, f.group_name, f.member_count FROM fusions f JOIN graphs g USING (run_id, graph_id) "
            "WHERE f.run_id = ?", [rid]).fetchall()}
        layouts = dict(con.execute(
            "SELECT g.folder, count(l.buffer) FROM graphs g LEFT JOIN layouts l USING (run_id, graph_id) "
            "WHERE g.run_id = ? GROUP BY ALL", [rid]).fetchall())
    fused_seen = 0
    for folder in _graph_folders(run):
        text = (folder / "ir_post_fusion.txt").read_text()
        tops = _top_level_nodes(text)
        links = Counter(owner for owner in _MEMBER_LINK.findall(text) if owner in tops)
        for top in tops:
            assert fused[(folder.name, top)] == links.get(top, 1), (folder.name, top)
        fused_seen += sum(1 for n in links.values() if n > 1)
        assert layouts[folder.name] == len(set(_LAYOUT_LINE.findall(text))), folder.name
    assert fused_seen > 0  # every workload fuses somewhere


def _top_level_nodes(text: str) -> set[str]:
    """Names of the unindented record headers that no `snodes[i] =` line introduces (from 2.5 a
    member's header is unindented too)."""
    tops, previous = set(), ""
    for line in text.splitlines():
        m = _HEADER.match(line)
        if m and not previous.endswith("] ="):
            tops.add(m[1])
        if line.strip():
            previous = line
    return tops


def test_pre_25_fused_members_and_layouts(captured):
    """The hunt's figures for 2.4.1 (tests/fixtures/SOURCES.md): the cnn forward's largest fused node
    and the layouts of buffers met only inside fused nodes."""
    root, db = captured
    with reader(db) as con:
        rid = _run_id(con, _run(root, "2.4.1", "cnn_train"))
        members = con.execute("SELECT member_count, members, buffers FROM fusions WHERE run_id = ? AND "
                              "group_name = 'buf4_buf5_buf18_buf19_buf7_buf21_buf22'", [rid]).fetchone()
        forward = con.execute("SELECT count(*) FROM layouts WHERE run_id = ? AND graph_id = '0_forward'", [rid]).fetchone()
    names = ["buf4", "buf5", "buf18", "buf19", "buf7", "buf21", "buf22"]
    assert members == (7, names, names)
    assert forward == (39,)


def test_aot_id_after_a_blank_line():
    """2.4's output code opens with a blank line, then `# AOT ID: ['0_forward']`."""
    with tarfile.open(ARCHIVE) as tf:
        member = next(m for m in tf.getmembers() if m.name.startswith("cpu-torch2.4.1/cnn_train/")
                      and m.name.endswith("model__0_backward_3.1/output_code.py"))
        text = tf.extractfile(member).read().decode()
    assert text.startswith("\n# AOT ID: ['0_backward']\n")
    assert output_code.aot_graph_id(text[:200]) == "0_backward"
    facts = output_code.parse_output_code(text).facts
    assert (facts["aot_id"], facts["phase"]) == (0, "backward")
    assert output_code.code_digest(text) == output_code.code_digest(text.strip() + "\n")


def test_one_cause_for_a_break_across_releases(captured):
    """gbreak_dyn's print() break is one cause in every release although each writes its own message
    (2.3 `call_function BuiltinVariable(print) ...`, 2.4 and 2.5 `builtin: print [...] False`, 2.7 the
    registry's title): the title is the first line of 2.7.1's own counters["graph_break"] key."""
    root, db = captured
    keys = _truth_breaks(_run(root, "2.7.1", "gbreak_dyn"))
    title = next(k for k in keys if "`print`" in k).split("\n", 1)[0]
    with reader(db) as con:
        for version in RELEASES:
            run = _run(root, version, "gbreak_dyn")
            printed = [k for k in _truth_breaks(run) if "print" in k]
            assert len(printed) == 1, version  # the release's own message of the print break
            causes = con.execute(
                "SELECT DISTINCT e.cause_title FROM compile_events e WHERE e.run_id = ? AND e.kind = 'graph_break' "
                "AND (e.reason LIKE '%print%')", [_run_id(con, run)]).fetchall()
            assert causes == [(title,)], version
            unmapped = con.execute("SELECT count(*) FROM compile_events WHERE run_id = ? AND kind = 'graph_break' "
                                   "AND cause_id IS NULL", [_run_id(con, run)]).fetchone()
            assert unmapped == (0,), version


def _truth_breaks(run: Path) -> dict:
    return json.loads((run / "ground_truth.json").read_text())["counters"]["graph_break"]


def test_the_explorer_of_a_2_3_run_says_what_its_trace_holds(captured, monkeypatch):
    """2.3.1 gbreak_dyn has a TORCH_TRACE log with no compilation_metrics record (2.3 writes none): the
    Run explorer says so, not that the log is missing, and the rows saying why a count is unknown keep
    the release they name (the manifest's torch) instead of a masked `torch N`."""
    import shutil

    from tests.test_dashboards import open_page

    root, db = captured
    run = _run(root, "2.3.1", "gbreak_dyn")
    (log,) = (run / "trace").glob("*.log")
    assert '"compilation_metrics"' not in log.read_text()
    release = ".".join(json.loads((run / "manifest.json").read_text())["torch"].split(".")[:2])
    with reader(db) as con:
        run_id = _run_id(con, run)
    app_db = str(Path(db).with_name("app.duckdb"))
    shutil.copyfile(db, app_db)
    at = open_page(app_db, "explorer", monkeypatch, explore_run=run_id, tab="Compile events")
    captions = " ".join(c.value for c in at.caption)
    assert "holds no compilation_metrics record" in captions and "has no TORCH_TRACE log" not in captions
    # the unknown_* rows are notes on the page, not events; the cause they group by keeps the release
    with reader(db) as con:
        causes = [c for (c,) in con.execute("SELECT cause FROM compile_event_reasons WHERE run_id = ? "
                                             "AND kind LIKE 'unknown\\_%' ESCAPE '\\'", [run_id]).fetchall()]
    assert causes and not any(re.search(r"\bN\b", c) for c in causes), causes
    assert sum(f"torch {release} writes no record" in c for c in causes) == 1, causes
