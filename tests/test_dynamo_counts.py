"""Graph breaks and recompiles as Dynamo counts them, where they happened, and one cause across releases.

The captures (tests/fixtures/captures/dynamo-counts.tar.xz, SOURCES.md) ran under `iwh capture` with
torch 2.13.0 CPU and transformers 5.24: GPT-2 `generate()` compiled whole, a Llama forward with
`output_attentions=True`, an nn.Sequential that recompiles auto-dynamically, and a script of
breaks (print, a data-dependent branch, backward, a break in a loop); each wrote Dynamo's counters,
read in-process, to ground_truth.json. The warehouse's counts are checked against those counters.
"""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest

from inductor_warehouse.analysis.canned_rows import run_query
from inductor_warehouse.ingest.parsers import compile_causes
from inductor_warehouse.ingest.parsers.compile_causes import break_cause, break_kind, guard_kind, origin
from inductor_warehouse.ingest.parsers.user_code import is_library
from tests.conftest import FIXTURES, ROOT, reader, unpack_cpu_corpora

COUNTS = FIXTURES / "captures" / "dynamo-counts.tar.xz"
CASES = ("breaks", "gpt2_generate", "llama_attentions", "sequential")


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    from inductor_warehouse.ingest.load import ingest_paths

    root = tmp_path_factory.mktemp("dynamo-counts")
    with tarfile.open(COUNTS) as tf:
        tf.extractall(root, filter="data")
    runs = root / "cpu-torch2.13"
    db = str(root / "wh.duckdb")
    summary = ingest_paths([runs], db)
    assert summary.runs == len(CASES) and summary.errors == 0, summary.line()
    return runs, db


def _truth(run: Path) -> dict:
    return json.loads((run / "ground_truth.json").read_text())["dynamo_counters"]


def _records(run: Path, name: str) -> list[str]:
    """The payloads of the trace's `name` artifacts, read apart from the parser."""
    text = next((run / "trace").glob("*.log")).read_text()
    out = []
    for block in re.split(r"\n(?=[VIWE]\d{4} )", text):
        if f'"name": "{name}"' in block.split("\n", 1)[0]:
            out.append("\n".join(line[1:] for line in block.split("\n")[1:] if line.startswith("\t")))
    return out


def test_graph_breaks_equal_dynamos_counter(captured):
    runs, db = captured
    with reader(db) as con:
        got = dict(con.execute("SELECT model, graph_breaks FROM run_metrics").fetchall())
    want = {case: sum(_truth(runs / case).get("graph_break", {}).values()) for case in CASES}
    assert want == {"breaks": 2, "gpt2_generate": 6, "llama_attentions": 13, "sequential": 0}
    assert got == want


def test_records_of_frames_that_fell_back_are_failures_not_breaks(captured):
    """Llama's trace has 18 graph-break records: 13 breaks Dynamo counted, 5 of frames that could not
    handle their break and ran eagerly (their compilation_metrics say fail_type Unsupported); GPT-2's 11
    records: 6 counted, 3 data-dependent branches of the frame itself, 1 break it could not resume
    from, 1 frame that fell back."""
    runs, db = captured
    with reader(db) as con:
        rows = {m: (gb, ub, f) for m, gb, ub, f in con.execute(
            "SELECT model, graph_breaks, uncounted_breaks, failures FROM run_metrics").fetchall()}
    for case, (records, skipped) in {"llama_attentions": (18, 5), "gpt2_generate": (11, 1), "breaks": (4, 1)}.items():
        texts = _records(runs / case, "dynamo_graph_break_reason")
        assert len(texts) == records
        assert sum("Skipping the function and falling back to eager" in t for t in texts) == skipped
        log = next((runs / case / "trace").glob("*.log")).read_text()
        failed = sum('{"compilation_metrics": ' in line and '"fail_type": "' in line for line in log.splitlines())
        graph_breaks, uncounted, failures = rows[case]
        assert graph_breaks + uncounted + skipped == records
        assert failures == failed >= skipped
    assert rows["gpt2_generate"][1] == sum(t.startswith("Graph break in user code at") and (
        "Graph Break Reason: Data-dependent branching" in t or "cannot resume from" in t)
        for t in _records(runs / "gpt2_generate", "dynamo_graph_break_reason")) == 4


def test_a_model_in_an_installed_package_gates_by_default(captured):
    """transformers' modeling code lives in site-packages: its breaks count in graph_breaks, the metric
    `iwh compare` gates, and origin says where they happened."""
    runs, db = captured
    with reader(db) as con:
        where = dict(con.execute("SELECT origin, count(*) FROM compile_events JOIN runs USING (run_id) "
                                 "WHERE model = 'llama_attentions' AND kind = 'graph_break' GROUP BY ALL").fetchall())
    assert where == {"package": 10, "torch": 3}  # 3 in torch/nn/modules/module.py's hook machinery
    from inductor_warehouse.analysis.regress import DEFAULT_RULES

    assert DEFAULT_RULES["graph_breaks"].threshold == 0 and DEFAULT_RULES["recompiles"].threshold == 0


def test_the_compiled_sequentials_recompile_is_the_models(captured):
    """torch.compile(nn.Sequential) compiles torch's `inner` wrapper (torch/_dynamo/external_utils.py);
    the batch size changing makes it recompile with a dynamic batch: one recompile, the model's own."""
    runs, db = captured
    texts = _records(runs / "sequential", "recompile_reasons")
    assert len(texts) == 1 and "size mismatch at index 0" in texts[0]
    with reader(db) as con:
        rows = con.execute("SELECT e.origin, e.cause_id FROM compile_events e JOIN runs USING (run_id) "
                           "WHERE model = 'sequential' AND kind = 'recompile'").fetchall()
        metrics = con.execute("SELECT recompiles FROM run_metrics WHERE model = 'sequential'").fetchone()
    assert rows == [("model", "tensor size mismatch (TENSOR_MATCH)")]
    assert metrics == (1,)


def test_causes_are_registry_ids(captured):
    runs, db = captured
    with reader(db) as con:
        causes = dict(con.execute(
            "SELECT cause, count(*) FROM compile_event_reasons JOIN runs USING (run_id) "
            "WHERE model = 'breaks' AND kind = 'graph_break' GROUP BY ALL").fetchall())
    counted = _truth(runs / "breaks")["graph_break"]
    # Dynamo's counter keys are the messages; each ends with the registry link of its id
    assert causes == {re.search(r"/gb/(gb\d+)\.html", k).group(1): v for k, v in counted.items()}


def test_one_cause_across_releases(tmp_path):
    """The shared CPU corpora: 2.6.0 wrote `Unsupported: Tensor.backward` and `'skip function
    graph_break in file ...'` where 2.13 and 2.14.1 write the registry's gb0123 and gb0025 (a link in the
    message); 2.6's `Data-dependent jump` is 2.13's gb0170. One cause each, every release."""
    from inductor_warehouse.ingest.load import ingest_paths

    roots = unpack_cpu_corpora(tmp_path)
    db = str(tmp_path / "wh.duckdb")
    ingest_paths(roots, db)
    old = next(roots[0].glob("*/ca/trace/*.log")).read_text()
    assert "Reason: Unsupported: Tensor.backward" in old and "/gb/" not in old
    with reader(db) as con:
        rows = run_query(con, "graph_breaks/by_model")
        uncounted = con.execute("SELECT DISTINCT r.compiler_version, e.cause FROM compile_event_reasons e "
                                "JOIN runs r USING (run_id) WHERE kind = 'uncounted_break' ORDER BY ALL").fetchall()
    by = {}
    for r in rows:
        by.setdefault((r["model"], r["cause"]), set()).add(r["compiler_version"].split("+")[0])
    assert by == {("ca", "gb0123"): {"2.6.0", "2.13.0", "2.14.1"}, ("dynamic", "gb0025"): {"2.6.0", "2.13.0", "2.14.1"}}
    assert [c for _, c in uncounted] == ["gb0170"] * 3


# -- the rules on their own, on texts of the captures and the corpora ----------------------------

def test_break_kinds():
    assert break_kind("Graph Break Reason: Encountered graph break when attempting to trace CALL: a function "
                      "call, e.g. f(x, y):\n\nData-dependent branching") == "graph_break"  # raised in an inlined call
    assert break_kind("Graph Break Reason: Data-dependent branching\n  Explanation: ...") == "uncounted_break"
    assert break_kind("Reason: Data-dependent jump") == "uncounted_break"
    assert break_kind("Graph Break Reason: Encountered graph break that we cannot resume from. Compiling up to "
                      "the previous resumable state") == "uncounted_break"
    assert break_kind("Graph Break Reason: Failed to handle graph break gracefully. Skipping the function and "
                      "falling back to eager. Graph break encountered:") is None
    assert break_kind("Graph break: skip: from user code at:\n  File \"m.py\", line 3") is None
    assert break_kind("Reason: Unsupported: Tensor.backward") == "graph_break"


def test_origins():
    sp = "/venv/lib/python3.11/site-packages"
    assert origin(f"{sp}/transformers/models/llama/modeling_llama.py") == "package"
    assert origin(f"{sp}/timm/models/vision_transformer.py") == "package"
    assert origin(f"{sp}/torch/nn/modules/container.py") == "model"  # nn.Sequential: the model's layers
    assert origin(f"{sp}/torch/nn/modules/module.py") == "torch"  # nn.Module's call and hook machinery
    assert origin(f"{sp}/torch/_dynamo/external_utils.py") == "torch"
    assert origin("/home/me/pytorch/torch/_dynamo/eval_frame.py") == "torch"  # a source checkout
    assert origin("/usr/local/lib/python3.11/inspect.py") == "stdlib"
    assert origin("<frozen importlib._bootstrap>") == "stdlib"
    assert origin("/home/user/corpus/gen_models.py") == "model"
    assert origin(None) is None
    # where a kernel or a break is in the user's code: a packaged model is the model's, torch.nn is not
    assert not is_library(f"{sp}/timm/models/efficientnet.py") and not is_library("/home/user/corpus/gen_models.py")
    assert is_library(f"{sp}/torch/nn/modules/linear.py") and is_library("/usr/local/lib/python3.11/inspect.py")


def test_guard_kinds_group_across_releases():
    assert guard_kind("0/0: tensor 'L['x']' rank mismatch. expected 2, actual 3") == \
        guard_kind("0/0: tensor 'x' rank mismatch. expected 2, actual 3") == "tensor rank mismatch (TENSOR_MATCH)"
    assert guard_kind("0/0: ___check_obj_id(func.__code__, 94331056668336), type=<class 'code'>  # f = g") == \
        "object identity (ID_MATCH)"
    assert guard_kind("18/1: 2 <= input_ids.size()[1] <= 11  # is_done = torch.full(") == "dynamic shape (SHAPE_ENV)"
    assert guard_kind("0/0: len(args) == 2                # func_name = f") == "length (LENGTH_CHECK)"
    assert guard_kind("6/0: key == 'attentions'           # module.register") == "value (EQUALS_MATCH)"


def test_pre_registry_rules_name_registry_ids():
    """Every rule of pre_registry.json names an id the registry has; the corpus's 2.6 texts map."""
    titles = json.loads((compile_causes.CAUSES / "graph_break_registry.json").read_text())["ids"]
    rules = json.loads((compile_causes.CAUSES / "pre_registry.json").read_text())["rules"]
    assert rules and all(r["id"] in titles and r["was"] for r in rules)
    assert break_cause("Reason: Unsupported: Tensor.backward") == ("gb0123", "Unsupported Tensor.backward() call")
    assert break_cause("Reason: Data-dependent jump") == ("gb0170", "Data-dependent branching")
    assert break_cause("Reason: Unsupported: 'skip function graph_break in file /v/torch/_dynamo/decorators.py'")[0] == "gb0025"
    assert break_cause("Reason: Unsupported: something no release wrote") == (None, None)
    # the builtin call site's messages of 2.3 (base.py's fallback) and of 2.4 to 2.6 (builtin.py's own)
    assert break_cause("call_function BuiltinVariable(getattr) [TensorVariable(), ConstantVariable()] {}")[0] == \
        break_cause("builtin: getattr [<class 'torch._dynamo.variables.tensor.TensorVariable'>] False")[0] == "gb0059"
    assert break_cause("call_function UserDefinedObjectVariable(Foo) [] {}")[0] == "gb0147"  # base.py, any other
    assert break_cause("call_function args: TensorVariable() ")[0] == "gb0055"  # utils.py proxy_args_kwargs


@pytest.mark.torch
def test_the_registry_data_is_the_installed_torchs(tmp_path):
    """Every id of the torch under test's graph_break_registry.json is in the shipped data, with its title."""
    import subprocess

    python = ROOT / ".venv-torch-2.13" / "bin" / "python"
    if not python.exists():
        pytest.skip("no torch interpreter")
    path = subprocess.run([str(python), "-c", "import torch._dynamo, os; print(os.path.join(os.path.dirname("
                           "torch._dynamo.__file__), 'graph_break_registry.json'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    installed = json.loads(Path(path).read_text())
    shipped = json.loads((compile_causes.CAUSES / "graph_break_registry.json").read_text())["ids"]
    assert all(any(e["Gb_type"] in shipped[gid.lower()] for e in entries) for gid, entries in installed.items())


def test_a_harness_workloads_graph_breaks_equal_its_csvs(tmp_path):
    """The benchmark harness's huggingface.py on Reformer (tests/fixtures/SOURCES.md): its CSV's
    graph_breaks (sum of Dynamo's counters["graph_break"] over the run) is 11 and fallbacks_to_eager 1;
    the warehouse's count for the same process is the same."""
    import csv

    from inductor_warehouse.ingest.load import ingest_paths

    with tarfile.open(FIXTURES / "captures" / "harness-reformer.tar.xz") as tf:
        tf.extractall(tmp_path, filter="data")
    run = tmp_path / "cpu-torch2.13" / "accuracy" / "Reformer"
    (row,) = csv.DictReader(open(next(run.glob("*.csv"))))
    assert (row["graph_breaks"], row["fallbacks_to_eager"]) == ("11", "1")
    db = str(tmp_path / "wh.duckdb")
    assert ingest_paths([run], db).errors == 0
    with reader(db) as con:
        got = con.execute("SELECT m.graph_breaks, m.fallbacks, h.graph_breaks FROM run_metrics m "
                          "JOIN harness_results h USING (run_id)").fetchall()
    assert got == [(int(row["graph_breaks"]), int(row["fallbacks_to_eager"]), int(row["graph_breaks"]))]


@pytest.mark.parametrize("case", ["gpt2_generate", "llama_attentions"])
def test_on_an_h100_too(tmp_path, case):
    """The same transformers models on this project's GPU machine (one H100, torch 2.11.0+cu130,
    transformers 5.17 of its image; tests/fixtures/SOURCES.md): graph breaks as its Dynamo counted
    them (8 and 10), the records of frames that fell back left to the failures."""
    from inductor_warehouse.ingest.parsers.torch_trace import parse_torch_trace

    with tarfile.open(FIXTURES / "captures" / "dynamo-counts-gpu.tar.xz") as tf:
        tf.extractall(tmp_path, filter="data")
    run = tmp_path / "gpu-torch2.11" / case
    want = sum(_truth(run)["graph_break"].values())
    parsed = parse_torch_trace(open(next((run / "trace").glob("*.log")), "rb"))
    kinds = [e["kind"] for e in parsed.rows["compile_events"]]
    records = _records(run, "dynamo_graph_break_reason")
    assert kinds.count("graph_break") == want == {"gpt2_generate": 8, "llama_attentions": 10}[case]
    assert kinds.count("graph_break") + kinds.count("uncounted_break") + parsed.counters[
        "graph_break_of_a_skipped_frame"] == len(records)


SKIPPED_LOGS = FIXTURES / "torch_logs"


@pytest.mark.parametrize("log,truth", [
    ("skipped_frame/skipped_2.13.torch_logs.txt", "skipped_2.13.ground_truth.json"),
    ("old_releases/skip_in_try_2.5.1.torch_logs.txt", "skip_in_try_2.5.1.counters.json"),
])
def test_a_log_of_skipped_frames_alone_counts_0_breaks_not_unknown(tmp_path, log, truth):
    """A print inside `try:` (dynamo_counts.py --case skipped under iwh capture with torch 2.13; the
    2.5.1 capture of SOURCES.md): Dynamo skips the frame, counts the print as unimplemented and no
    graph break. The graph_breaks logger wrote only the skip, so the log alone, its logger on, says
    0 breaks, as Dynamo counted, and one failure row: the frame that ran eagerly."""
    from inductor_warehouse.ingest.load import ingest_paths

    counters = json.loads((FIXTURES / "capture" / truth).read_text())
    counters = counters.get("dynamo_counters", counters)
    text = (SKIPPED_LOGS / log).read_text()
    assert "[__graph_breaks]" in text and sum(counters.get("graph_break", {}).values()) == 0
    assert sum(counters["unimplemented"].values()) == 1 and counters["frames"] == {"total": 1}
    lone = tmp_path / Path(log).name
    lone.write_text(text)
    db = str(tmp_path / "wh.duckdb")
    assert ingest_paths([lone], db).errors == 0
    with reader(db) as con:
        assert con.execute("SELECT graph_breaks FROM run_metrics").fetchall() == [(0,)]
        assert con.execute("SELECT kind, fallback FROM compile_events WHERE kind NOT LIKE 'unknown%'").fetchall() == [
            ("failure", True)]


def test_a_specialization_s_line_is_the_model_s_not_torch_s(tmp_path):
    """Reformer's modeling code lives in site-packages and calls torch's LayerNorm: the line of a
    shape specialization is the model's call (read from the record's user_stack, file names through
    the log's `str` records), never the harness's nor torch.nn's."""
    from inductor_warehouse.ingest.load import ingest_paths

    with tarfile.open(FIXTURES / "captures" / "harness-reformer.tar.xz") as tf:
        tf.extractall(tmp_path, filter="data")
    run = tmp_path / "cpu-torch2.13" / "accuracy" / "Reformer"
    names: dict[int, str] = {}
    expected = []
    for line in next((run / "trace").glob("*.log")).read_text().splitlines():
        if "] {" not in line or line.startswith("\t"):
            continue
        record = json.loads(line.split("] ", 1)[1])
        if "str" in record:
            names[record["str"][1]] = record["str"][0]
        elif "symbolic_shape_specialization" in record:
            frames = [(names[f["filename"]], f["line"]) for f in record["symbolic_shape_specialization"]["user_stack"]]
            expected.append([f for f in frames if "/site-packages/torch/" not in f[0]][-1])
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([run], db)
    with reader(db) as con:
        got = con.execute("SELECT user_file, user_line FROM shape_events WHERE kind = 'specialization' "
                          "ORDER BY line").fetchall()
    assert got == expected and len(got) >= 1
    assert all(f.endswith("transformers/models/reformer/modeling_reformer.py") for f, _ in got)
