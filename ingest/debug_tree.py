"""The debug tree (`torch_compile_debug/run_*/torchinductor/<graph>/`): one graph a folder, its
rows from the folder's files, joined within the folder (fusions to the kernels they became), and
its graphs row.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

from inductor_warehouse.ingest.assembly import Assembly
from inductor_warehouse.ingest.listing import Artifact
from inductor_warehouse.ingest.parsers.cache_settings import note
from inductor_warehouse.ingest.parsers import (aoti_code, fusion_ir, fx_graph, fx_graph_runnable, output_code, provenance,
                                               torch_trace)
from inductor_warehouse.ingest.reading import Reader, parse_file
from inductor_warehouse.ingest.rows import Parsed, Row, graph_row

# `<model>__<aot id>_<phase>_<nth graph>.<counter>` (debug.py: get_aot_graph_name() and a process-wide
# counter), or `<model>___<nth graph>.<counter>` with no AOT id or phase for a graph compiled while
# AOTAutograd names none: AOTInductor's, and before 2.4 a process's first graph (that compile traced
# the pattern matcher's replacements through AOTAutograd, which cleared the name).
GRAPH_DIR_RE = re.compile(r"^(?P<model>.+?)__(?:(?P<aot_id>\d+)_(?P<phase>inference|forward|backward))?"
                          r"_(?P<nth>\d+)\.(?P<ctr>\d+)$")


class GraphFolder(NamedTuple):
    """What a graph folder's name says of its graph."""
    graph_id: str  # `<aot id>_<phase>`, or the folder's name when it names no AOT id
    aot_id: int | None
    phase: str | None
    order: int  # the process-wide counter: the order graphs were compiled in


def graph_folder(folder: str) -> GraphFolder | None:
    """What the name of graph folder `folder` (its name, not its path) says; None when it is no graph
    folder's name."""
    m = GRAPH_DIR_RE.match(folder)
    if m is None:
        return None
    aot_id = int(m["aot_id"]) if m["aot_id"] else None
    return GraphFolder(f"{aot_id}_{m['phase']}" if aot_id is not None else folder, aot_id, m["phase"], int(m["ctr"]))


# A graph folder that lacks one of these was cut short (the process was killed, a disk filled).
REQUIRED_GRAPH_FILES = ("fx_graph_readable.py", "ir_pre_fusion.txt", "ir_post_fusion.txt", "output_code.py")


def read_graph_folders(ctx: Assembly, arts: list[Artifact]) -> None:  # noqa: C901 - a dispatch over a graph folder's file kinds
    """Parse every graph folder of the debug tree (`arts`: the files of all of them), take its rows
    and put what its code says of the run in the run's facts; the graph ids found are
    `ctx.debug_graphs`."""
    run, reader, take, facts = ctx.run, ctx.reader, ctx.take, ctx.facts
    graphs: dict[str, dict[str, Artifact]] = defaultdict(dict)
    for a in arts:
        graphs[str(a.path.parent)][a.path.name] = a
    ids = set()
    for _, files in sorted(graphs.items(), key=lambda kv: compile_order(kv[0])):
        any_art = next(iter(files.values()))
        folder = any_art.path.parent.name
        named = graph_folder(folder)
        code_art = files.get("output_code.py") or files.get("output_code.cpp")
        parse = aoti_code.parse_aoti_code if code_art is not None and code_art.path.suffix == ".cpp" \
            else output_code.parse_output_code
        texts: dict[str, str] = {}
        code = parse_file(code_art, reader, parse, texts)
        if code is not None and code.facts.get("aoti"):
            ids.add(torch_trace.AOTI_CODE)
            aoti_graph = True
        else:
            aoti_graph = False
        aot_id = code.facts.get("aot_id") if code else None
        phase = code.facts.get("phase") if code else None
        if aot_id is None and named and named.aot_id is not None:
            aot_id, phase = named.aot_id, named.phase
        graph_id = f"{aot_id}_{phase}" if aot_id is not None and phase else folder
        ids.add(graph_id)
        if "output_code.py" in texts and code is not None and code.facts.get("aot_id") is None:
            # the trace's copy of code that names no AOT ID (2.3) is found by its text
            digest = output_code.code_digest(texts["output_code.py"])
            ctx.debug_codes[digest] = (*ctx.debug_codes.get(digest, ()), graph_id)
        if aoti_graph:
            facts.setdefault("aoti_graphs", []).append(graph_id)
        for name in REQUIRED_GRAPH_FILES:
            if name not in files and not (name == "output_code.py" and code_art is not None):
                reader.error(any_art, f"graph folder {folder} has no {name} (process killed mid-compile?)",
                             kind=ctx.kind_named(name) or "debug_tree", path=str(Path(run.rel(any_art)).parent / name))
        pre = parse_file(files.get("ir_pre_fusion.txt"), reader, fusion_ir.parse_fusion_ir)
        post = parse_file(files.get("ir_post_fusion.txt"), reader, fusion_ir.parse_fusion_ir)
        readable = files.get("fx_graph_readable.py") or files.get("fx_graph_transformed.py")
        ops = parse_file(readable, reader, fx_graph.parse_fx_graph, texts)
        if ops is not None:
            stage = "readable" if readable.path.name == "fx_graph_readable.py" else "transformed"  # type: ignore[union-attr]
            for op in ops.rows.get("ops", []):
                op["stage"] = stage
        prov_art = files.get("inductor_provenance_tracking_node_mappings.json")
        prov = parse_file(prov_art, reader, provenance.parse_provenance)
        if prov_art is None:
            # no node mappings (written only when a pre-grad graph was recorded): the kernel ->
            # post-grad node file, their `cppCodeToPost` written on its own, says the kernels' nodes
            prov_art = next((files[n] for n in provenance.KERNEL_NODE_FILES if n in files), None)
            prov = parse_file(prov_art, reader, provenance.parse_kernel_nodes)
        runnable = parse_file(files.get("fx_graph_runnable.py"), reader, fx_graph_runnable.parse_fx_graph_runnable)

        kernels = code.rows.get("kernels", []) if code else []
        generated = sum(1 for k in kernels if k.get("generated"))
        for parsed, art in ((code, code_art), (ops, readable), (prov, prov_art),
                            (runnable, files.get("fx_graph_runnable.py"))):
            if parsed is not None and art is not None:  # parsed only where the file is
                take(parsed, art, graph_id)
        # fusions and layouts describe the graph after fusion; before it only as a fallback
        if post is not None:
            _link_fusions_to_kernels(post.rows.get("fusions", []), code.facts.get("call_buffers", []) if code else [])
            take(post, files["ir_post_fusion.txt"], graph_id)
        elif pre is not None:
            take(pre, files["ir_pre_fusion.txt"], graph_id, only={"layouts"})
        if pre is not None and post is not None:
            take(pre, files["ir_pre_fusion.txt"], graph_id, only=set())
        for src in (code, runnable):
            if src is not None:
                for k in ("device", "backend", "compiler_version", "compiler_commit", "cuda_version", "device_name",
                          "benchmark_model"):
                    if src.facts.get(k) is not None:
                        facts.setdefault(k, src.facts[k])
                note(facts, src.facts.get("caches_said"))
        row = graph_row(
            graph_id, "debug_tree", phase=phase or (named.phase if named else None), aot_id=aot_id, folder=folder,
            pre_fusion_nodes=pre.facts.get("top_level_nodes") if pre else None,
            post_fusion_nodes=post.facts.get("top_level_nodes") if post else None,
            kernel_count=generated if code else None,
            extern_kernel_count=(len(kernels) - generated) if code else None,
            compile_order=named.order if named else None,
            output_code_hash=reader.hashes.get(run.rel(code_art)) if code_art is not None else None,
            partitions=code.facts.get("partitions") if code else None,
            unknown_because=_missing(pre is not None, post is not None, code is not None),
        )
        take(Parsed.one("graphs", row), any_art)
        take(_graph_texts(files, reader, texts), any_art, graph_id)
    ctx.debug_graphs = frozenset(ids)


def _graph_texts(files: dict[str, Artifact], reader: Reader, texts: dict[str, str]) -> Parsed:
    """The post-grad graph and the generated code, kept for the provenance viewer: the nodes and
    kernels the provenance mappings name are lines of these texts. (The pre-grad graph is only in
    the trace.)"""
    parsed = Parsed()
    post = files.get("fx_graph_transformed.py")
    if post is not None and post.path.name not in texts:
        text = reader.text(post)
        if text is not None:
            texts[post.path.name] = text
    for name, kind in (("fx_graph_transformed.py", "post_grad_graph"), ("output_code.py", "output_code"),
                       ("output_code.cpp", "output_code")):
        if texts.get(name) is not None:
            parsed.add("graph_texts", {"kind": kind, "text": texts[name], "source": "debug_tree"})
    return parsed


def compile_order(folder: str) -> tuple[int, str]:
    """A sort key of graph folders (names or paths): in the order they were compiled, others last."""
    named = graph_folder(folder.rsplit("/", 1)[-1])
    return (named.order if named else 1 << 30, folder)


def _link_fusions_to_kernels(fusions: list[Row], call_buffers: list[tuple[str, list[str]]]) -> None:
    """Name the generated kernel each scheduler node became.

    The IR names extern kernels itself. A generated kernel is the first launch in `call()` that
    passes one of the buffers the node writes: producers launch before the consumers that read
    those buffers. Nodes whose buffers no launch names (fused away into a kernel's registers,
    or no-op nodes) keep NULL rather than a guess.
    """
    first_launch: dict[str, str] = {}
    for kernel, buffers in call_buffers:
        for b in buffers:
            first_launch.setdefault(b, kernel)
    for f in fusions:
        # extern nodes (MultiOutput getitems included) and no-op nodes launch no generated kernel
        if f.get("kernel_name") is None and not (f.get("node_class") or "").startswith(("Extern", "Nop")):
            found = [first_launch[b] for b in f.get("buffers") or () if b in first_launch]
            f["kernel_name"] = found[0] if found else None


def _missing(pre: bool, post: bool, code: bool) -> str | None:
    """Why a graph's counts are unknown, by the files its folder lacks (a process killed mid-compile
    leaves IR without output code, or neither): each unknown says which file it wanted."""
    lacks = [name for name, there in (("ir_pre_fusion.txt", pre), ("ir_post_fusion.txt", post),
                                      ("output_code.py", code)) if not there]
    if not lacks:
        return None
    counts = ([] if pre and post else ["fusion counts"]) + ([] if code else ["kernels"])
    return f"the graph folder has no {' or '.join(lacks)} (process killed mid-compile?): {' and '.join(counts)} unknown"
