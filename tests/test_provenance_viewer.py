"""The provenance viewer's model (analysis/provenance.py) built from the warehouse, held to the logs
and debug trees it was ingested from: tlparse's own provenance test logs (JIT, AOTInductor, CUDA,
the 2.7 format, debug handles, the extended log), GPU captures (Triton, combo kernels, AOTInductor
on an H100), CPU captures (C++ kernels, AOTInductor on the CPU) and a torch-spyre run with its
provenance sidecar.

Expected values are read from the artifacts here (payloads of the log, files of the debug tree),
never from the code under test."""

from __future__ import annotations

import gzip
import json
import re
import shutil
import tarfile
from pathlib import Path

import pytest

from inductor_warehouse.analysis import provenance
from inductor_warehouse.analysis.canned_rows import run_query
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.store.api import Warehouse
from tests.conftest import FIXTURES

LOGS = sorted((FIXTURES / "torch_trace" / "provenance").glob("*.log.gz")) + [
    FIXTURES / "torch_trace" / "eras" / "tlparse_aot_provenance.log.gz"]
GPU = FIXTURES / "captures" / "gpu-torch2.11-provenance.tar.xz"
MODES = FIXTURES / "captures" / "cpu-torch2.13-2.14.1-modes.tar.xz"
CPU_RUN = FIXTURES / "runs" / "cpu-torch2.13" / "transformer"
GPU_RUN = FIXTURES / "runs" / "gpu-torch2.11" / "mlp__train__fp32__default"
OLD_RUN = FIXTURES / "runs" / "cpu-torch2.6.0" / "mlp"


def payloads(path: Path, name: str) -> list[str]:
    """Every payload of the log's artifacts (or record kind) called `name`, in log order."""
    lines = (gzip.open(path, "rt") if path.suffix == ".gz" else path.open()).read().split("\n")
    out = []
    for i, line in enumerate(lines):
        if f'"name": "{name}"' in line or line.split("] ", 1)[-1].startswith(f'{{"{name}"'):
            body = []
            for nxt in lines[i + 1:]:
                if not nxt.startswith("\t"):
                    break
                body.append(nxt[1:])
            out.append("\n".join(body))
    return out


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    root = tmp_path_factory.mktemp("viewer")
    with tarfile.open(GPU) as tf:
        tf.extractall(root / "gpu", filter="data")
    with tarfile.open(MODES) as tf:
        tf.extractall(root / "modes", filter="data", members=[m for m in tf.getmembers() if "/aoti/" in m.name
                                                              or m.name.endswith("/aoti")])
    spyre = root / "spyre" / "run"
    shutil.copytree(FIXTURES / "spyre" / "add", spyre / "inductor-spyre" / "sdsc_fused_linear_relu_0")
    shutil.copy(FIXTURES / "spyre_provenance" / "level0_and_fused" / "spyre_provenance.json", spyre)
    db = str(root / "wh.duckdb")
    paths = [*map(str, LOGS), str(root / "gpu"), str(root / "modes"), str(spyre), str(CPU_RUN), str(GPU_RUN),
             str(OLD_RUN)]
    ingest_paths(paths, db)
    with Warehouse(db) as w:
        yield w, root


def viewer(w, run_id: str, graph_id: str) -> tuple[provenance.Provenance, dict[str, str]]:
    """The model as the page builds it, from the same canned queries."""
    texts = {r["kind"]: r["text"] for r in run_query(w, "explore/provenance_texts", run_id=run_id, graph_id=graph_id)}
    links = run_query(w, "explore/provenance_links", run_id=run_id, graph_id=graph_id)
    kernels = [r["kernel_name"] for r in run_query(w, "explore/kernels", run_id=run_id, graph_id=graph_id, limit=5000)]
    return provenance.build(texts, links, kernels), texts


def graphs_of(w, source: str) -> list[tuple[str, str]]:
    return w.sql("SELECT g.run_id, g.graph_id FROM graphs g JOIN runs r USING (run_id) WHERE r.source_path = ? "
                 "ORDER BY g.graph_id", [source]).rows()


def pairs_of(mapping: dict) -> tuple[set, set]:
    """(post node, kernel) and (pre node, post node) pairs of a node-mappings document, both directions."""
    post_kernel = {(p, k.rpartition(":")[0] if k.rpartition(":")[2].isdigit() else k)
                   for p, ks in mapping.get("postToCppCode", {}).items() for k in ks}
    post_kernel |= {(p, k.rpartition(":")[0] if k.rpartition(":")[2].isdigit() else k)
                    for k, ps in mapping.get("cppCodeToPost", {}).items() for p in ps}
    pre_post = {(a, b) for a, bs in mapping.get("preToPost", {}).items() for b in bs if a}
    pre_post |= {(a, b) for b, as_ in mapping.get("postToPre", {}).items() for a in as_ if a}
    return post_kernel, pre_post


def assignment_lines(text: str, node: str) -> list[int]:
    """The lines of a graph's text that assign `node` (an FX node printed as `node: "T" = ...` or `node = ...`)."""
    pat = re.compile(rf'^\s*{re.escape(node)}(\s*:\s*"[^"]*")?\s*=\s')
    return [i for i, line in enumerate(text.split("\n"), 1) if pat.match(line)]


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_the_viewer_maps_what_the_logs_node_mappings_say(wh, log):
    w, _ = wh
    [(run_id, graph_id)] = graphs_of(w, str(log))
    model, texts = viewer(w, run_id, graph_id)
    [mapping] = [json.loads(p) for p in payloads(log, "inductor_provenance_tracking_node_mappings")]
    post_kernel, pre_post = pairs_of(mapping)
    assert {(p, k) for _, p, k in model.links if p and k} == post_kernel
    assert {(a, b) for a, b, _ in model.links if a and b} == pre_post
    # every mapped node is a line of its panel, the line that assigns it in the log's own graph text
    pre_text = (payloads(log, "before_pre_grad_graph") or payloads(log, "inductor_pre_grad_graph"))[-1]
    post_text = (payloads(log, "inductor_post_grad_graph") or payloads(log, "after_post_grad_graph"))[-1]
    assert texts["pre_grad_graph"] == pre_text and texts["post_grad_graph"] == post_text
    for post, _ in post_kernel:
        assert model.post.items[post] == assignment_lines(post_text, post), post
    for pre, _ in pre_post:
        assert model.pre.items[pre] == assignment_lines(pre_text, pre), pre
    # every kernel is on a line of the code that names it, and choosing it lights the nodes the log maps it to
    code = texts["output_code"].split("\n")
    for kernel in {k for _, k in post_kernel}:
        lines = model.code.items[kernel]
        assert lines and any(kernel in code[n - 1] for n in lines), kernel
        lit = model.related("kernel", kernel)
        assert lit["post"] == {p for p, k in post_kernel if k == kernel}
        assert lit["pre"] == {a for a, b in pre_post if b in lit["post"]}


@pytest.mark.parametrize("log", [p for p in LOGS if "debug_handle" in p.name], ids=lambda p: p.name)
def test_a_debug_handle_picks_the_call_after_its_comment(wh, log):
    """With debug handles, the wrapper says `[Provenance debug handles] kernel:N` above each call: the
    kernel's call site is the next line that names it (tlparse's rule)."""
    w, _ = wh
    [(run_id, graph_id)] = graphs_of(w, str(log))
    model, texts = viewer(w, run_id, graph_id)
    code = texts["output_code"].split("\n")
    comments = [(i, m.group(1)) for i, line in enumerate(code, 1)
                if (m := re.search(r"\[Provenance debug handles\] (\S+):\d+", line))]
    assert comments
    for i, kernel in comments:
        call = next(j for j in range(i + 1, len(code) + 1) if kernel in code[j - 1])
        assert {i, call} <= set(model.code.items[kernel]), kernel


def test_a_graph_logged_before_its_code_is_one_graph(wh):
    """The 2.7 AOTInductor log writes its node mappings before its code: one graph holds both."""
    w, _ = wh
    log = FIXTURES / "torch_trace" / "provenance" / "inductor_provenance_aot_log_old.log.gz"
    [(run_id, graph_id)] = graphs_of(w, str(log))
    assert w.sql("SELECT count(*) FROM lineage WHERE run_id = ? AND graph_id = ?", [run_id, graph_id]).rows()[0][0] > 0
    assert {r["kind"] for r in run_query(w, "explore/provenance_texts", run_id=run_id, graph_id=graph_id)} == {
        "pre_grad_graph", "post_grad_graph", "output_code"}


def debug_graph(root: Path) -> Path:
    return next(root.rglob("inductor_provenance_tracking_node_mappings.json")).parent


@pytest.mark.parametrize("capture", ["gpu/gpu/combo_kernels", "gpu/gpu/aoti", "modes/cpu-2.13/aoti",
                                     "modes/cpu-2.14.1/aoti"])
def test_captures_map_their_debug_trees_provenance(wh, capture):
    """Our GPU (combo kernels, AOTInductor's C++ with Triton kernels) and CPU (AOTInductor, C++)
    captures: the viewer's links equal the graph folder's mapping file, its post-grad panel is the
    folder's fx_graph_transformed.py and its code output_code.py / .cpp."""
    w, root = wh
    run_dir = root / capture
    folder = debug_graph(run_dir)
    [(run_id, graph_id)] = graphs_of(w, str(run_dir))
    model, texts = viewer(w, run_id, graph_id)
    post_kernel, pre_post = pairs_of(json.loads((folder / "inductor_provenance_tracking_node_mappings.json").read_text()))
    assert {(p, k) for _, p, k in model.links if p and k} == post_kernel
    assert {(a, b) for a, b, _ in model.links if a and b} == pre_post
    post_text = (folder / "fx_graph_transformed.py").read_text()
    code_file = next(f for f in (folder / "output_code.py", folder / "output_code.cpp") if f.exists())
    assert texts["post_grad_graph"] == post_text and texts["output_code"] == code_file.read_text()
    # the pre-grad panel is the trace's before_pre_grad_graph (the debug tree has none)
    assert texts["pre_grad_graph"] == payloads(next((run_dir / "trace").glob("*.log")), "before_pre_grad_graph")[-1]
    for post, kernel in post_kernel:
        assert model.post.items[post] == assignment_lines(post_text, post)
        assert any(kernel in model.code.lines[n - 1] for n in model.code.items[kernel]), kernel
    if "combo" in capture:  # one launch, several subkernels: the combo kernel's own definition names it
        combo = [k for _, k in post_kernel if "RoundRobinComboKernelGrid" in "\n".join(
            model.code.lines[n - 1] for n in model.code.items[k])]
        assert combo


def test_a_kernel_and_a_model_line_light_each_other_on_a_cpu_run(wh):
    """The 2.13 transformer (C++ kernels, training): a model line lights the kernels its stack traces
    name (the log's kernel stack traces, read here), and each of those kernels lights that line."""
    w, _ = wh
    run_id = graphs_of(w, str(CPU_RUN))[0][0]
    log = next((CPU_RUN / "trace").glob("*.log"))
    frame = re.compile(r'File "([^"]+gen_models\.py)", line (\d+)')
    for stacks in payloads(log, "inductor_provenance_tracking_kernel_stack_traces"):
        for key, traces in json.loads(stacks).items():
            kernel = key.rpartition(":")[0]
            lines = {f"{f}:{n}" for t in traces for f, n in frame.findall(t)[-1:]}
            for graph_id in ("0_forward", "0_backward"):
                model, _ = viewer(w, run_id, graph_id)
                if kernel in model.kernel_lines:
                    assert lines <= model.related("kernel", kernel)["line"]
                    for line in lines:
                        assert kernel in model.related("line", line)["kernel"]


def test_spyre_kernels_show_their_specs_and_model_lines(wh):
    """A Spyre kernel folder has no wrapper: the code panel is its kernels' specs, and its model
    lines come from the sidecar's kernel stack traces."""
    w, root = wh
    [(run_id, graph_id)] = graphs_of(w, str(root / "spyre" / "run"))
    texts = {r["kind"]: r["text"] for r in run_query(w, "explore/provenance_texts", run_id=run_id, graph_id=graph_id)}
    assert texts == {}
    kernels = run_query(w, "explore/kernels", run_id=run_id, graph_id=graph_id, limit=100)
    sources = {k["kernel_name"]: run_query(w, "explore/kernel_source", source_hash=k["source_hash"])[0]["source"]
               for k in kernels if k["generated"]}
    links = run_query(w, "explore/provenance_links", run_id=run_id, graph_id=graph_id)
    model = provenance.build(texts, links, list(sources), sources)
    sidecar = json.loads((root / "spyre" / "run" / "spyre_provenance.json").read_text())
    joined = next(p for p in sidecar["upstreamProjections"].values() if p["upstreamJoin"] == "ok")
    # the sidecar's compiled kernel is the folder (this graph); its specs inherit its model lines
    lines = {"{file}:{start_line}".format(**_frame(t)) for k, h in joined["kernelStackTraces"].items()
             if k.rpartition(":")[0] == graph_id for t in h["stackTraces"]}
    assert lines and set(model.kernel_lines) == {graph_id, *sources}
    assert all(set(model.kernel_lines[k]) == lines for k in model.kernel_lines)
    assert model.related("kernel", next(iter(sources)))["line"] == lines
    assert model.code.lines[model.code.items[graph_id][0] - 1].startswith(f"# compiled kernel {graph_id}")
    for name, text in sources.items():
        assert "\n".join(model.code.lines[n - 1] for n in model.code.items[name]).startswith(f"# kernel {name}\n{text}")


def _frame(trace: str) -> dict:
    """The innermost `File "...", line N` of a stack trace."""
    f, n = re.findall(r'File "([^"]+)", line (\d+)', trace)[-1]
    return {"file": f, "start_line": int(n)}


def test_a_graph_without_provenance_says_which_flag_records_it(wh):
    w, _ = wh
    run_id, graph_id = graphs_of(w, str(OLD_RUN))[0]
    model, texts = viewer(w, run_id, graph_id)
    assert not model.links and not model.kernel_lines
    assert "INDUCTOR_PROVENANCE=1" in provenance.NO_PROVENANCE and "TORCH_TRACE" in provenance.NO_PROVENANCE
    assert provenance.missing_texts(texts) == [  # 2.6's debug tree: code and post-grad graph, no trace pre-grad graph
        m for m in provenance.missing_texts({}) if m.startswith("the pre-grad graph")]
