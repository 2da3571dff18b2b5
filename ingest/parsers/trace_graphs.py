"""Readers of a compile's graphs and code: `inductor_output_code`, AOTInductor's `graph_dump`s,
`exported_program`, the post-grad graph and the provenance artifacts (graphs, kernels, ops, lineage).

Graphs from output code: graph_id = `<aot_id>_<phase>` from output code's `# AOT ID:`, else
`trace_<compile id>_<compile order>`, with `_<compile order>` appended when the id was already
taken in this log. Output code a debug tree of the same process holds is not a graph of its own: it
is the debug tree's graph of the same AOT ID, or else (2.3 writes no AOT ID, and names the folder of
a process's first graph `<model>___<n>.<counter>`) the first not yet claimed of those whose code is
the same text; compile_order counts inductor_output_code records from 0 (the debug tree's
`.N` folder suffix). Ops: each post-grad graph waits in a queue per compile id and goes to the
next inductor_output_code of that compile id (each graph is logged just before its output code;
forward then backward pair in order). Provenance artifacts (stack traces, node mappings) go to the
latest output code of their compile id, which Inductor logs just before them.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from inductor_warehouse.ingest.parsers import fx_graph, output_code, provenance
from inductor_warehouse.ingest.parsers.cache_settings import note
from inductor_warehouse.ingest.parsers.aoti_code import parse_aoti_code
from inductor_warehouse.ingest.parsers.trace_log import TraceLog
from inductor_warehouse.ingest.parsers.user_code import stack_trace_rows
from inductor_warehouse.ingest.rows import Json, Parsed, graph_row

# graph_dump names of AOTInductor's generated code; AOTI_CODE in known_graphs says the debug tree
# of the same process holds it (output_code.cpp), so the trace's copy is not parsed again
AOTI_CODE_NAMES = frozenset({"inductor_aot_wrapper_code", "inductor_aot_kernel_code", "inductor_aot_code"})
AOTI_CODE = "<aoti code>"
# a call of an op in AOTAutograd's printed graph: a node Inductor has to compile
_AOT_OP = re.compile(rb"= torch\.ops\.")


@dataclass
class Graphs:
    """What the graph readers keep across records: graphs already read from a debug tree of the same
    process (`known_graphs`), output codes seen, each compile id's latest graph, post-grad graphs
    waiting for their code, pre-grad graphs, exported programs, AOTAutograd's compiles and
    AOTInductor's wrapper waiting for its kernel file."""
    log: TraceLog
    known_graphs: frozenset[str] = frozenset()
    # output_code.code_digest of each debug-tree graph's code -> those graph ids, in compile order
    known_codes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # compile order -> the graph id of the debug tree's empty folder of that order (a cache hit's)
    empty_folders: Mapping[int, str] = field(default_factory=dict)
    output_codes: int = 0
    latest_graph: dict[str | None, str] = field(default_factory=dict)  # compile id -> graph id of its latest output code
    # compile id -> post-grad graphs (line, text) waiting for their output code, parsed only then
    pending_ops: dict[str | None, deque[tuple[int, str]]] = field(default_factory=dict)
    exports: int = 0  # exported programs seen
    # compile ids AOTAutograd handed a graph on, in order -> whether a graph of it had an op for Inductor
    aot_compiles: dict[str | None, bool] = field(default_factory=dict)
    # (line, compile id, text, md5) of AOTInductor's wrapper code
    aoti_wrapper: tuple[int, str | None, str, str | None] | None = None
    pre_grad: dict[str | None, str] = field(default_factory=dict)  # compile id -> its pre-grad graph's text (the latest logged)
    pre_grad_used: set[str | None] = field(default_factory=set)  # compile ids whose pre-grad graph a graph of this log took
    # compile id -> (line, payload) of its kernel -> post-grad node artifact, waiting for the node mappings
    # logged after it: read only where they name no kernel
    kernel_nodes: dict[str | None, tuple[int, bytes]] = field(default_factory=dict)


def read_output_code(graphs: Graphs, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    parsed = graphs.log.parsed
    text = data.decode("utf-8", "replace")
    known = _debug_tree_graph(graphs, text)
    if known is not None:
        graphs.output_codes += 1
        parsed.facts["graph_compile_ids"][known] = cid
        parsed.counters["output_code_in_debug_tree"] += 1
        graphs.latest_graph[cid] = known
        waiting = graphs.pending_ops.get(cid)
        if waiting:
            waiting.popleft()  # its ops come from the debug tree too
        add_pre_grad_text(graphs, known, cid)  # the debug tree has no pre-grad graph
        return
    code_graph(graphs, output_code.parse_output_code(text), lineno, cid, graphs.log.payload_md5 or hashlib.md5(data).hexdigest(),
               text)


def _debug_tree_graph(graphs: Graphs, text: str) -> str | None:
    """The debug tree's graph whose code this is, not yet claimed by an earlier record: the one its
    AOT ID names, else (code that names none) the first in compile order whose code is the same text."""
    claimed = graphs.log.parsed.facts["graph_compile_ids"]
    known = output_code.aot_graph_id(text[:200])
    if known is not None:
        return known if known in graphs.known_graphs and known not in claimed else None
    if graphs.known_codes:
        same = graphs.known_codes.get(output_code.code_digest(text), ())
        return next((g for g in same if g not in claimed), None)
    return None


def read_graph_dump(graphs: Graphs, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    """AOTInductor's code: `inductor_aot_wrapper_code` then `inductor_aot_kernel_code` (2.7+), or
    one `inductor_aot_code` (2.4 to 2.6); the wrapper and kernels together are one graph, as the
    debug tree's output_code.cpp is."""
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str) or name not in AOTI_CODE_NAMES:
        graphs.log.parsed.counters[f"graph_dump:{name}"] += 1
        return
    if AOTI_CODE in graphs.known_graphs:
        graphs.log.parsed.counters["aoti_code_in_debug_tree"] += 1
        return
    text = data.decode("utf-8", "replace")
    if name == "inductor_aot_wrapper_code":
        graphs.aoti_wrapper = (lineno, cid, text, graphs.log.payload_md5)
        return
    wrapper = graphs.aoti_wrapper if name == "inductor_aot_kernel_code" else None
    graphs.aoti_wrapper = None
    start, whole = (wrapper[0], wrapper[2] + "\n" + text) if wrapper else (lineno, text)
    code_graph(graphs, parse_aoti_code(whole), start, cid, hashlib.md5(whole.encode()).hexdigest(), whole)


def read_exported_program(graphs: Graphs, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    """torch.export's program (with TORCH_DTRACE): a graph of its own, with its ops; no Inductor
    compile made it, so it has no kernel counts."""
    text = data.decode("utf-8", "replace")
    body = text.split("\nGraph signature:", 1)[0].split("\n")[1:]  # below `ExportedProgram:`
    graph = "\n".join(line[4:] if line.startswith("    ") else line for line in body)
    graph_id = f"export_{graphs.exports}"
    graphs.exports += 1
    add_ops(graphs, graph, lineno, graph_id, "exported")
    graphs.log.parsed.facts["graph_compile_ids"][graph_id] = cid
    graphs.log.parsed.add("graphs", graph_row(
        graph_id, "torch_trace", compile_id=cid, partitions=None,
        unknown_because="a torch.export program: no Inductor compile, so no kernels or fusions to count"))


def read_aot_graph(graphs: Graphs, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    """AOTAutograd handed this compile's graph to Inductor: a compile that finished without code from it
    had no kernels when its graph had no op (Inductor returns such a graph before its cache), else its
    code was loaded from the FX graph cache by a release that logs no code on a hit (2.3, 2.4)."""
    graphs.aot_compiles[cid] = graphs.aot_compiles.get(cid, False) or _AOT_OP.search(data) is not None


def read_pre_grad_graph(graphs: Graphs, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    """The graph Inductor received (`before_pre_grad_graph`; `inductor_pre_grad_graph` in 2.7): the
    provenance mappings' pre-grad nodes are its lines. Kept for the graphs of its compile id."""
    graphs.pre_grad[cid] = data.decode("utf-8", "replace")


def add_pre_grad_text(graphs: Graphs, graph_id: str, cid: str | None) -> None:
    text = graphs.pre_grad.get(cid)
    if text is not None:
        graphs.pre_grad_used.add(cid)
        add_text(graphs, graph_id, "pre_grad_graph", text)


def add_text(graphs: Graphs, graph_id: str, kind: str, text: str) -> None:
    graphs.log.parsed.add("graph_texts", {"graph_id": graph_id, "kind": kind, "text": text, "source": "torch_trace"})


def read_post_grad_graph(graphs: Graphs, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    graphs.pending_ops.setdefault(cid, deque()).append((lineno, data.decode("utf-8", "replace")))


def read_stack_traces(graphs: Graphs, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    if not data.strip():
        return  # a cache hit of a graph compiled without provenance tracking logs the artifact with no payload
    name = "inductor_provenance_tracking_kernel_stack_traces"
    graph_id = _graph_for_provenance(graphs, cid, name)
    value = graphs.log.json(data, lineno, name)
    if graph_id is not None and isinstance(value, dict):
        stack_trace_rows(graphs.log.parsed, graph_id, value)


def read_kernel_nodes(graphs: Graphs, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    """2.7's inductor_triton_kernel_to_post_grad_nodes (2.8: inductor_generated_...): the node mappings'
    `cppCodeToPost`, logged just before them; kept until they come (finish_graphs: or never)."""
    if data.strip():
        graphs.kernel_nodes[cid] = (lineno, data)


def read_node_mappings(graphs: Graphs, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    kernels = graphs.kernel_nodes.pop(cid, None)
    if not data.strip() and kernels is None:
        return  # a cache hit of a graph compiled without provenance tracking logs the artifact with no payload
    graph_id = _graph_for_provenance(graphs, cid, "inductor_provenance_tracking_node_mappings")
    if graph_id is None:
        graph_id = graph_without_code(graphs, cid)
    if graph_id is None or graph_id in graphs.known_graphs:
        return  # a debug-tree graph: its own mapping file says the same
    sub = provenance.parse_provenance(data.decode("utf-8", "replace")) if data.strip() else Parsed()
    graphs.log.offset_problems(sub, lineno)
    if kernels is not None and not any(r["kernel_name"] for r in sub.rows.get("lineage", ())):
        # mappings written without a pre-grad graph are empty: the kernels' nodes are the artifact's
        _take_lineage(graphs, graph_id, kernels)
    _add_lineage(graphs, graph_id, sub)


def _take_lineage(graphs: Graphs, graph_id: str, kernels: tuple[int, bytes]) -> None:
    sub = provenance.parse_kernel_nodes(kernels[1].decode("utf-8", "replace"))
    graphs.log.offset_problems(sub, kernels[0])
    _add_lineage(graphs, graph_id, sub)


def _add_lineage(graphs: Graphs, graph_id: str, sub: Parsed) -> None:
    for table, rows in sub.rows.items():
        for r in rows:
            r["graph_id"] = graph_id
        graphs.log.parsed.rows[table].extend(rows)
    graphs.log.parsed.counters.update(sub.counters)


def finish_graphs(graphs: Graphs) -> None:
    """Code and post-grad graphs the log ended without pairing."""
    for cid, kernels in graphs.kernel_nodes.items():  # no node mappings followed
        graph_id = graphs.latest_graph.get(cid) or graph_without_code(graphs, cid)
        if graph_id is not None and graph_id not in graphs.known_graphs:
            _take_lineage(graphs, graph_id, kernels)
    graphs.kernel_nodes.clear()
    if graphs.aoti_wrapper is not None:  # a wrapper whose kernel file was never logged
        lineno, cid, text, md5 = graphs.aoti_wrapper
        graphs.aoti_wrapper = None
        code_graph(graphs, parse_aoti_code(text), lineno, cid, md5 or hashlib.md5(text.encode()).hexdigest(), text)
    unpaired = sum(len(q) for q in graphs.pending_ops.values())
    if unpaired:
        graphs.log.parsed.counters["post_grad_graph_without_output_code"] += unpaired
    for cid, waiting in graphs.pending_ops.items():
        graph_id = graph_without_code(graphs, cid) if waiting else None
        if graph_id is not None:
            graph_line, graph_text = waiting[-1]  # the graph Inductor got last for this compile
            add_ops(graphs, graph_text, graph_line, graph_id, "transformed")
            add_text(graphs, graph_id, "post_grad_graph", graph_text)
            add_pre_grad_text(graphs, graph_id, cid)
    # pre-grad graphs of compiles whose graphs this log did not make (a debug tree's AOTInductor
    # graph): the assembler gives them to the graphs of their compile id
    graphs.log.parsed.facts["pre_grad_graphs"] = {cid: text for cid, text in graphs.pre_grad.items()
                                             if cid not in graphs.pre_grad_used}


def code_graph(graphs: Graphs, sub: Parsed, lineno: int, cid: str | None, code_hash: str, code: str) -> None:
    """A graph (and its kernels, and the post-grad graph waiting for it) from a compile's code;
    the code, the post-grad and pre-grad graphs kept as its texts."""
    parsed = graphs.log.parsed
    order = graphs.output_codes
    graphs.output_codes += 1
    graphs.log.offset_problems(sub, lineno)
    aot_id, phase = sub.facts.get("aot_id"), sub.facts.get("phase")
    graph_id = f"{aot_id}_{phase}" if aot_id is not None else f"trace_{cid}_{order}"
    if graph_id in parsed.facts["graph_compile_ids"]:
        # a cache hit on another graph's entry replays that graph's code, AOT ID and all, while Dynamo
        # gave this one an id of its own, which its empty debug folder of the same order names
        own = graphs.empty_folders.get(order)
        if own is not None and own.endswith(f"_{phase}") and own not in parsed.facts["graph_compile_ids"]:
            graph_id = own
        else:
            # AOT ids restart when a process resets Dynamo (tlparse's cache_hit_miss.log)
            parsed.counters["repeated_aot_id"] += 1
            graph_id = f"{graph_id}_{order}"
    _adopt_codeless(graphs, cid, graph_id)
    kernels = sub.rows.get("kernels", [])
    for table, rows in sub.rows.items():
        for r in rows:
            r["graph_id"] = graph_id
        parsed.rows[table].extend(rows)
    parsed.add("graphs", graph_row(
        graph_id, "torch_trace", compile_id=cid, phase=phase, aot_id=aot_id,
        kernel_count=sum(1 for k in kernels if k.get("generated")),
        extern_kernel_count=sum(1 for k in kernels if k.get("generated") is False),
        compile_order=order, output_code_hash=code_hash, partitions=sub.facts.get("partitions")))
    parsed.facts["graph_compile_ids"][graph_id] = cid
    if sub.facts.get("aoti"):
        parsed.facts.setdefault("aoti_graphs", []).append(graph_id)
    for fact in ("device", "backend", "benchmark_model"):
        if sub.facts.get(fact) and fact not in parsed.facts:
            parsed.facts[fact] = sub.facts[fact]
    note(parsed.facts, sub.facts.get("caches_said"), "trace ")
    parsed.counters.update(sub.counters)
    graphs.latest_graph[cid] = graph_id
    add_text(graphs, graph_id, "output_code", code)
    add_pre_grad_text(graphs, graph_id, cid)
    waiting = graphs.pending_ops.get(cid)
    if waiting:
        graph_line, graph_text = waiting.popleft()
        add_ops(graphs, graph_text, graph_line, graph_id, "transformed")
        add_text(graphs, graph_id, "post_grad_graph", graph_text)


def add_ops(graphs: Graphs, graph_text: str, lineno: int, graph_id: str, stage: str) -> None:
    """The ops of an FX graph's text: `transformed` for the trace's post-grad graph (the text after
    Inductor's FX passes), `exported` for an exported program's."""
    ops = fx_graph.parse_fx_graph(graph_text)
    graphs.log.offset_problems(ops, lineno)
    for r in ops.rows.get("ops", []):
        r["graph_id"], r["stage"] = graph_id, stage
        graphs.log.parsed.add("ops", r)  # type: ignore[call-overload]  # a row of fx_graph's (rows hold dicts)


def graph_without_code(graphs: Graphs, cid: str | None) -> str | None:
    """A graph for what a log says of a compile whose output code it never logged (AOTInductor
    and provenance-only logs): its ops and lineage are kept, its kernel counts unknown (NULL).
    Not when a debug tree of the same process holds the graphs: it has them, code or not."""
    if graphs.known_graphs:
        return None
    graph_id = f"trace_{cid}_nocode" if cid is not None else "trace_nocode"
    if graph_id not in graphs.log.parsed.facts["graph_compile_ids"]:
        graphs.log.parsed.facts["graph_compile_ids"][graph_id] = cid
        graphs.log.parsed.add("graphs", graph_row(graph_id, "torch_trace", compile_id=cid))
    return graph_id


def _adopt_codeless(graphs: Graphs, cid: str | None, graph_id: str) -> None:
    """Code logged after its compile's node mappings (AOTInductor in 2.7: the mappings come before
    the wrapper) joins the graph those mappings made without code: one graph, not two."""
    codeless = f"trace_{cid}_nocode" if cid is not None else "trace_nocode"
    ids = graphs.log.parsed.facts["graph_compile_ids"]
    if codeless not in ids or graphs.known_graphs:
        return
    del ids[codeless]
    rows = graphs.log.parsed.rows
    rows["graphs"] = [g for g in rows.get("graphs", []) if g["graph_id"] != codeless]
    for table in ("lineage", "ops", "graph_texts"):
        for r in rows.get(table, ()):
            if r.get("graph_id") == codeless:
                r["graph_id"] = graph_id


def _graph_for_provenance(graphs: Graphs, cid: str | None, name: str) -> str | None:
    graph_id = graphs.latest_graph.get(cid)
    if graph_id is None:
        graphs.log.parsed.counters[f"{name}_without_output_code"] += 1
    return graph_id


def code_digests(head: bytes) -> set[str]:
    """output_code.code_digest of each whole `inductor_output_code` payload in the first bytes of a
    log: what a debug folder of the same process holds as output_code.py (ingest/discover.py joins
    the two by it where the log names no pid). A record the bytes cut off is left out."""
    digests = set()
    lines = head.split(b"\n")
    i = 0
    while i < len(lines):
        if lines[i][:1] != b"\t" and b'{"inductor_output_code"' in lines[i]:
            j = i + 1
            while j < len(lines) and lines[j][:1] == b"\t":
                j += 1
            if j < len(lines):  # the record ends in the bytes (a cut one gives a digest nothing has)
                body = b"\n".join(line[1:] for line in lines[i + 1:j])
                digests.add(output_code.code_digest(body.decode("utf-8", "replace")))
            i = j
        else:
            i += 1
    return digests
