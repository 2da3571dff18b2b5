"""Readers of a compile's graphs and code: `inductor_output_code`, AOTInductor's `graph_dump`s,
`exported_program`, the post-grad graph and the provenance artifacts (graphs, kernels, ops, lineage).

Graphs from output code: graph_id = `<aot_id>_<phase>` from output code's `# AOT ID:`, else
`trace_<compile id>_<compile order>`, with `_<compile order>` appended when the id was already
taken in this log; compile_order counts inductor_output_code records from 0 (the debug tree's
`.N` folder suffix). Ops: each post-grad graph waits in a queue per compile id and goes to the
next inductor_output_code of that compile id (each graph is logged just before its output code;
forward then backward pair in order). Provenance artifacts (stack traces, node mappings) go to the
latest output code of their compile id, which Inductor logs just before them.
"""

from __future__ import annotations

import hashlib
from collections import deque

from inductor_warehouse.ingest.parsers import fx_graph, output_code, provenance
from inductor_warehouse.ingest.parsers.aoti_code import parse_aoti_code
from inductor_warehouse.ingest.parsers.user_code import stack_trace_rows
from inductor_warehouse.ingest.rows import Parsed, graph_row

# graph_dump names of AOTInductor's generated code; AOTI_CODE in known_graphs says the debug tree
# of the same process holds it (output_code.cpp), so the trace's copy is not parsed again
AOTI_CODE_NAMES = frozenset({"inductor_aot_wrapper_code", "inductor_aot_kernel_code", "inductor_aot_code"})
AOTI_CODE = "<aoti code>"


def read_output_code(state, lineno, meta, cid, data):
    parsed = state.parsed
    text = data.decode("utf-8", "replace")
    known = output_code.aot_graph_id(text[:200])
    if known in state.known_graphs and known not in parsed.facts["graph_compile_ids"]:
        state.output_codes += 1
        parsed.facts["graph_compile_ids"][known] = cid
        parsed.counters["output_code_in_debug_tree"] += 1
        state.latest_graph[cid] = known
        waiting = state.pending_ops.get(cid)
        if waiting:
            waiting.popleft()  # its ops come from the debug tree too
        add_pre_grad_text(state, known, cid)  # type: ignore[arg-type]  # the debug tree has no pre-grad graph
        return
    code_graph(state, output_code.parse_output_code(text), lineno, cid, state.payload_md5 or hashlib.md5(data).hexdigest(),
               text)


def read_graph_dump(state, lineno, meta, cid, data):
    """AOTInductor's code: `inductor_aot_wrapper_code` then `inductor_aot_kernel_code` (2.7+), or
    one `inductor_aot_code` (2.4 to 2.6); the wrapper and kernels together are one graph, as the
    debug tree's output_code.cpp is."""
    name = meta.get("name") if isinstance(meta, dict) else None
    if name not in AOTI_CODE_NAMES:
        state.parsed.counters[f"graph_dump:{name}"] += 1
        return
    if AOTI_CODE in state.known_graphs:
        state.parsed.counters["aoti_code_in_debug_tree"] += 1
        return
    text = data.decode("utf-8", "replace")
    if name == "inductor_aot_wrapper_code":
        state.aoti_wrapper = (lineno, cid, text, state.payload_md5)
        return
    wrapper = state.aoti_wrapper if name == "inductor_aot_kernel_code" else None
    state.aoti_wrapper = None
    start, whole = (wrapper[0], wrapper[2] + "\n" + text) if wrapper else (lineno, text)
    code_graph(state, parse_aoti_code(whole), start, cid, hashlib.md5(whole.encode()).hexdigest(), whole)


def read_exported_program(state, lineno, meta, cid, data):
    """torch.export's program (with TORCH_DTRACE): a graph of its own, with its ops; no Inductor
    compile made it, so it has no kernel counts."""
    text = data.decode("utf-8", "replace")
    body = text.split("\nGraph signature:", 1)[0].split("\n")[1:]  # below `ExportedProgram:`
    graph = "\n".join(line[4:] if line.startswith("    ") else line for line in body)
    graph_id = f"export_{state.exports}"
    state.exports += 1
    add_ops(state, graph, lineno, graph_id, "exported")
    state.parsed.facts["graph_compile_ids"][graph_id] = cid
    state.parsed.add("graphs", graph_row(
        graph_id, "torch_trace", compile_id=cid, partitions=None,
        unknown_because="a torch.export program: no Inductor compile, so no kernels or fusions to count"))


def read_aot_graph(state, lineno, meta, cid, data):
    """AOTAutograd handed this compile's graph to Inductor: a compile that finished without code from it had no kernels."""
    if cid not in state.aot_compiles:
        state.aot_compiles[cid] = None


def read_pre_grad_graph(state, lineno, meta, cid, data):
    """The graph Inductor received (`before_pre_grad_graph`; `inductor_pre_grad_graph` in 2.7): the
    provenance mappings' pre-grad nodes are its lines. Kept for the graphs of its compile id."""
    state.pre_grad[cid] = data.decode("utf-8", "replace")


def add_pre_grad_text(state, graph_id: str, cid) -> None:
    text = state.pre_grad.get(cid)
    if text is not None:
        state.pre_grad_used.add(cid)
        add_text(state, graph_id, "pre_grad_graph", text)


def add_text(state, graph_id: str, kind: str, text: str) -> None:
    state.parsed.add("graph_texts", {"graph_id": graph_id, "kind": kind, "text": text, "source": "torch_trace"})


def read_post_grad_graph(state, lineno, meta, cid, data):
    state.pending_ops.setdefault(cid, deque()).append((lineno, data.decode("utf-8", "replace")))


def read_stack_traces(state, lineno, meta, cid, data):
    name = "inductor_provenance_tracking_kernel_stack_traces"
    graph_id = _graph_for_provenance(state, cid, name)
    value = state.json(data, lineno, name)
    if graph_id is not None and isinstance(value, dict):
        stack_trace_rows(state.parsed, graph_id, value)


def read_node_mappings(state, lineno, meta, cid, data):
    graph_id = _graph_for_provenance(state, cid, "inductor_provenance_tracking_node_mappings")
    if graph_id is None:
        graph_id = graph_without_code(state, cid)
    if graph_id is None or graph_id in state.known_graphs:
        return  # a debug-tree graph: its own mapping file says the same
    sub = provenance.parse_provenance(data.decode("utf-8", "replace"))
    state.offset_problems(sub, lineno)
    for table, rows in sub.rows.items():
        for r in rows:
            r["graph_id"] = graph_id
        state.parsed.rows[table].extend(rows)
    state.parsed.counters.update(sub.counters)


def finish_graphs(state) -> None:
    """Code and post-grad graphs the log ended without pairing."""
    if state.aoti_wrapper is not None:  # a wrapper whose kernel file was never logged
        lineno, cid, text, md5 = state.aoti_wrapper
        state.aoti_wrapper = None
        code_graph(state, parse_aoti_code(text), lineno, cid, md5 or hashlib.md5(text.encode()).hexdigest(), text)
    unpaired = sum(len(q) for q in state.pending_ops.values())
    if unpaired:
        state.parsed.counters["post_grad_graph_without_output_code"] += unpaired
    for cid, waiting in state.pending_ops.items():
        graph_id = graph_without_code(state, cid) if waiting else None
        if graph_id is not None:
            graph_line, graph_text = waiting[-1]  # the graph Inductor got last for this compile
            add_ops(state, graph_text, graph_line, graph_id, "transformed")
            add_text(state, graph_id, "post_grad_graph", graph_text)
            add_pre_grad_text(state, graph_id, cid)
    # pre-grad graphs of compiles whose graphs this log did not make (a debug tree's AOTInductor
    # graph): the assembler gives them to the graphs of their compile id
    state.parsed.facts["pre_grad_graphs"] = {cid: text for cid, text in state.pre_grad.items()
                                             if cid not in state.pre_grad_used}


def code_graph(state, sub: Parsed, lineno: int, cid, code_hash: str, code: str) -> None:
    """A graph (and its kernels, and the post-grad graph waiting for it) from a compile's code;
    the code, the post-grad and pre-grad graphs kept as its texts."""
    parsed = state.parsed
    order = state.output_codes
    state.output_codes += 1
    state.offset_problems(sub, lineno)
    aot_id, phase = sub.facts.get("aot_id"), sub.facts.get("phase")
    graph_id = f"{aot_id}_{phase}" if aot_id is not None else f"trace_{cid}_{order}"
    if graph_id in parsed.facts["graph_compile_ids"]:
        # AOT ids restart when a process resets Dynamo (tlparse's cache_hit_miss.log)
        parsed.counters["repeated_aot_id"] += 1
        graph_id = f"{graph_id}_{order}"
    _adopt_codeless(state, cid, graph_id)
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
    parsed.counters.update(sub.counters)
    state.latest_graph[cid] = graph_id
    add_text(state, graph_id, "output_code", code)
    add_pre_grad_text(state, graph_id, cid)
    waiting = state.pending_ops.get(cid)
    if waiting:
        graph_line, graph_text = waiting.popleft()
        add_ops(state, graph_text, graph_line, graph_id, "transformed")
        add_text(state, graph_id, "post_grad_graph", graph_text)


def add_ops(state, graph_text: str, lineno: int, graph_id: str, stage: str) -> None:
    """The ops of an FX graph's text: `transformed` for the trace's post-grad graph (the text after
    Inductor's FX passes), `exported` for an exported program's."""
    ops = fx_graph.parse_fx_graph(graph_text)
    state.offset_problems(ops, lineno)
    for r in ops.rows.get("ops", []):
        r["graph_id"], r["stage"] = graph_id, stage
        state.parsed.add("ops", r)


def graph_without_code(state, cid) -> str | None:
    """A graph for what a log says of a compile whose output code it never logged (AOTInductor
    and provenance-only logs): its ops and lineage are kept, its kernel counts unknown (NULL).
    Not when a debug tree of the same process holds the graphs: it has them, code or not."""
    if state.known_graphs:
        return None
    graph_id = f"trace_{cid}_nocode" if cid is not None else "trace_nocode"
    if graph_id not in state.parsed.facts["graph_compile_ids"]:
        state.parsed.facts["graph_compile_ids"][graph_id] = cid
        state.parsed.add("graphs", graph_row(graph_id, "torch_trace", compile_id=cid))
    return graph_id


def _adopt_codeless(state, cid, graph_id: str) -> None:
    """Code logged after its compile's node mappings (AOTInductor in 2.7: the mappings come before
    the wrapper) joins the graph those mappings made without code: one graph, not two."""
    codeless = f"trace_{cid}_nocode" if cid is not None else "trace_nocode"
    ids = state.parsed.facts["graph_compile_ids"]
    if codeless not in ids or state.known_graphs:
        return
    del ids[codeless]
    rows = state.parsed.rows
    rows["graphs"] = [g for g in rows.get("graphs", []) if g["graph_id"] != codeless]
    for table in ("lineage", "ops", "graph_texts"):
        for r in rows.get(table, ()):
            if r.get("graph_id") == codeless:
                r["graph_id"] = graph_id


def _graph_for_provenance(state, cid, name):
    graph_id = state.latest_graph.get(cid)
    if graph_id is None:
        state.parsed.counters[f"{name}_without_output_code"] += 1
    return graph_id
