"""output_code.py, and the trace's `inductor_output_code` payload (the same text).

facts: aot_id (int) and phase from the first line that is not blank, `# AOT ID: ['0_forward']`
(2.4 writes a blank line before it; 2.3 and code compiled outside AOTAutograd have none: no facts); device
(`cuda`, `cpu`, ...: from Triton `device_str=`, C++ kernels, or the wrapper's `empty_strided_<dev>`
allocations, a non-CPU device winning); backend (the backend of most generated kernels); caches_said
(a Triton kernel's inductor_meta `'force_disable_caches': True`: ingest/parsers/cache_settings.py).

rows['kernels'], two kinds:

* generated kernels, one per definition `<name> = async_compile.<method>(...)`, numbered by `site`
  in definition order. backend: `triton` for `.triton`, `cpp` for `.cpp`/`.cpp_pybinding`, else the
  method name. category: Triton's `@triton_heuristics.<kind>` decorator name as written
  (pointwise, reduction, persistent_reduction, template, foreach, split_scan, ...), else the
  name prefix (poi/red/per/tem/for/spl); C++: `template` when it defines a micro-GEMM (the CPU
  GEMM templates of max-autotune), else `reduction` when the code keeps a reduction
  accumulator (`tmp_acc<N>`), else `pointwise`. aten_ops/source_nodes come from the
  `Source Nodes: [...], Original ATen: [...]` comment above the definition, else from the one at
  its first call (NULL when neither exists; empty names are dropped). debug_handle is the
  first `[Provenance debug handles]` comment naming it. `source` is the text inside the triple
  quotes (the loader moves it to kernel_sources); an unterminated string keeps the row with
  source and source_hash NULL, and records a problem.
* extern call sites inside `def call(` (module level in 2.6, a `Runner` method from 2.13), inside
  every cudagraph partition `def partition_<N>(args)` (facts["partitions"] counts them) and inside
  every subgraph function `def <name>(args)` the others invoke (regional compilation's
  `repeated_subgraph<N>`, graph dedup's `partitioned_fw_subgraph_<i>_<j>`, cond/while_loop bodies):
  statements calling `extern_kernels.*`, `torch.ops.<ns>.<op>...` or the `aten.<op>.<overload>`
  shorthand, numbered by `site` in call order, separately from generated kernels. Fallbacks
  that only look auxiliary are launches too and are counted: random seeds
  (`aten.randint.low_out`), in-place scatters (`aten.scatter_reduce_.two`). On the whole corpus
  these sites are exactly the `.node.kernel` lines of ir_post_fusion.txt (not so where subgraph
  functions are: torch writes the IR of one subgraph there). A site is one row however often its
  subgraph runs; a subgraph's site says so in details: {"subgraph": name, "calls": the times `call`
  invokes it, directly or through other subgraphs, each invoking statement once}. kernel_name is the
  callee as written, which is also how provenance handles name it. Inductor's memory helpers
  (`torch.ops.inductor._alloc_from_pool`, `resize_storage_bytes_`) are not launches: left out.

Calls of generated kernels (`name.run(...)`, `name(...)`) make no rows; their count goes into
the kernel's details as `calls`: launches per run of `call`, a call inside a subgraph function
counted as often as that subgraph is invoked.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter

import orjson

from inductor_warehouse.ingest.parsers.kernel_rows import (BACKEND_DEVICES, DEVICE_STR, HANDLE, HANDLE_TAG, QUOTES, SOURCE_NODES,
                                                           SOURCE_NODES_TAG, add_kernels, device_facts, extern_row,
                                                           SourceNodes, generated_row, offset_of_line, plain_line_breaks,
                                                           source_node_lists)
from inductor_warehouse.ingest.parsers.cache_settings import from_output_code
from inductor_warehouse.ingest.parsers import spyre
from inductor_warehouse.ingest.rows import KernelRow, Parsed

__all__ = ["aot_graph_id", "code_digest", "kernel_text", "parse_output_code"]

# the wrapper's header (codegen/wrapper.py write_header) splices a template that, in 2.4, starts
# with a line break: blank lines may come first
_AOT_ID = re.compile(r"^\s*# AOT ID: \['(?P<aot_id>\d+)_(?P<phase>\w+)'\]")
# the `__main__` block ends with `compiled_module_main('<name>', ...)`: the model of the process's
# `--only <name>` argument (the benchmark harness's), 'None' without one
_BENCHMARK_NAME = re.compile(r"compiled_module_main\('(?P<name>[^'\n]+)'")
_DEFINITION = re.compile(r"^(?P<name>\w+) = async_compile\.(?P<method>\w+)\(")
_BUFFER = re.compile(r"\bbuf\d+\b")
# the wrapper's bodies: `call()`, and with cudagraph partitions (`graph_partition`, 2.9+) each
# `partition_<N>(args)` it hands to a cudagraph, which holds the partition's launches
# and, from 2.8, the bodies of subgraphs written as module-level functions the others invoke by name
# (regional compilation's `repeated_subgraph<N>`, graph dedup's `partitioned_fw_subgraph_<i>_<j>`,
# cond/while_loop branches): every wrapper function takes the one `args` list
_CALL_DEF = re.compile(r"^(?P<indent>\s*)def (?:call\(|(?P<partition>partition_\d+)\(|(?P<subgraph>\w+)\((?:self, )?args\):)")
_COMMENT_BLOCK = re.compile(r"#[^\n]*(?:\n#[^\n]*)*")  # lines that start with "#", from one of them
_STATEMENT_CALL = re.compile(r"^\s+(?:\w+(?:, \w+)* = )?(?P<callee>[A-Za-z_][\w.]*)\(")
_EXTERN = re.compile(r"^(?:extern_kernels\.\w+|torch\.ops\.\w+\.[\w.]+|aten\.\w+[\w.]*)$")
# inductor-namespace helpers that manage memory rather than launch work
_NOT_LAUNCHES = frozenset({"torch.ops.inductor._alloc_from_pool", "torch.ops.inductor.resize_storage_bytes_"})
_ALLOC_DEVICE = re.compile(r"empty_strided_(?P<device>[a-z]+)\(")


def aot_graph_id(head: str) -> str | None:
    """`<aot_id>_<phase>` from the `# AOT ID: ['0_forward']` line that opens the code (`head`: its
    start), without parsing the rest."""
    m = _AOT_ID.match(head)
    return f"{m['aot_id']}_{m['phase']}" if m else None


def code_digest(text: str) -> str:
    """What identifies one compile's code in both a debug tree's output_code.py and the trace's
    `inductor_output_code` (the same text): the md5 of its text, line breaks made plain and the
    blank lines around it left out."""
    return hashlib.md5(plain_line_breaks(text).strip().encode("utf-8", "replace")).hexdigest()


def parse_output_code(text: str) -> Parsed:  # noqa: C901 - one loop over the code's line kinds
    parsed = Parsed()
    text = plain_line_breaks(text)
    m = _AOT_ID.match(text)
    if m:
        parsed.facts["aot_id"] = int(m["aot_id"])
        parsed.facts["phase"] = m["phase"]

    generated: dict[str, KernelRow] = {}
    externs: list[KernelRow] = []
    calls: Counter[str] = Counter()
    call_buffers: list[tuple[str, list[str]]] = []  # generated-kernel launches in call order
    handles: dict[str, list[int]] = {}
    call_site_sources: dict[str, SourceNodes] = {}
    devices: Counter[str] = Counter()
    comment: SourceNodes | None = None  # source-node comment waiting for its definition or call
    handle: tuple[str, int] | None = None  # provenance handle waiting for its call
    call_indent: int | None = None
    saw_call = False
    partitions = 0
    in_fn = ""  # the wrapper function being read: "" for call and the partitions, else a subgraph's name
    subgraph_calls: dict[str, Counter[str]] = {}  # per subgraph: its generated-kernel launches
    invokes: dict[str, Counter[str]] = {}  # per wrapper function: the subgraphs it invokes
    invoke: re.Pattern[str] | None = None  # a call of any subgraph defined so far
    extern_bodies: list[str] = []  # the function of each extern site

    # a position in the text rather than a list of lines: kernel sources, most of the text, are
    # skipped in one find of their closing quotes
    pos, n, lineno = 0, len(text), 0
    while pos < n:
        end = text.find("\n", pos)
        if end == -1:
            end = n
        line = text[pos:end]
        line_start = pos
        lineno += 1
        pos = end + 1
        if call_indent is not None:
            stripped = line.lstrip()
            if stripped and len(line) - len(stripped) <= call_indent:
                call_indent = None  # fall through: this line belongs to the module again
            else:
                if not stripped:
                    continue
                if stripped[0] == "#":
                    if SOURCE_NODES_TAG in stripped:
                        m = SOURCE_NODES.match(stripped)
                        if m:
                            comment = source_node_lists(m)
                    elif HANDLE_TAG in stripped:
                        m = HANDLE.match(stripped)
                        if m:
                            handle = (m["kernel"], int(m["handle"]))
                    continue
                if "empty_strided_" in stripped:
                    for m in _ALLOC_DEVICE.finditer(stripped):
                        devices[m["device"]] += 1
                if invoke is not None:
                    for m in invoke.finditer(stripped):
                        invokes.setdefault(in_fn, Counter())[m[1]] += 1
                m = _STATEMENT_CALL.match(line)
                if m is None:
                    continue
                callee = m["callee"]
                name = callee[:-4] if callee.endswith(".run") else callee
                if name in generated:
                    if in_fn:
                        subgraph_calls[in_fn][name] += 1
                    else:
                        calls[name] += 1
                    call_buffers.append((name, _BUFFER.findall(line)))
                    if handle and handle[0] == name:
                        handles.setdefault(name, []).append(handle[1])
                    if comment:
                        call_site_sources.setdefault(name, comment)
                    comment = handle = None
                elif _EXTERN.match(callee) and callee not in _NOT_LAUNCHES:
                    debug_handle = handle[1] if handle and handle[0] == callee else None
                    externs.append(extern_row(callee, len(externs), comment, debug_handle, lineno))
                    extern_bodies.append(in_fn)
                    comment = handle = None
                continue

        if line.startswith("#"):
            # the whole block of comment lines at once (a kernel's node-to-ATen mapping runs to dozens)
            block = _COMMENT_BLOCK.match(text, line_start)
            assert block is not None, "the pattern matches any run of comment lines, this one at least"
            block_end = block.end()
            lineno += text.count("\n", line_start, block_end)
            pos = block_end + 1
            found = _last_source_nodes(text, line_start, block_end)
            if found:
                comment = found
            continue
        m = _DEFINITION.match(line)
        if m and m["method"] != "wait":
            start = line.find(QUOTES, m.end())
            body, closing, after = _kernel_source(text, line_start, line, start, pos)
            row = generated_row(m["name"], m["method"], len(generated), comment, body, lineno, closing)
            if start != -1 and closing is None:
                parsed.problem(f"kernel {m['name']}: source string never closed (file cut short?)", lineno)
            if after != pos:
                lineno += text.count("\n", pos, after) if after <= n else text.count("\n", pos) + 1
                pos = after
            if row["backend"] == "spyre":
                row["category"] = spyre.opspec_category(text[line_start:_statement_end(text, line_start)])
            generated[m["name"]] = row
            if closing:
                d = DEVICE_STR.search(closing)
                if d:
                    devices[d["device"]] += 1
            comment = None
            continue
        m = _CALL_DEF.match(line)
        if m:
            call_indent = len(m["indent"])
            saw_call = True
            partitions += m["partition"] is not None
            in_fn = m["subgraph"] or ""
            if in_fn:
                subgraph_calls[in_fn] = Counter()
                invoke = re.compile(rf"\b({'|'.join(map(re.escape, subgraph_calls))})\(")
            comment = handle = None
            continue
        if line.strip():
            comment = None

    if subgraph_calls:
        _count_subgraph_launches(subgraph_calls, invokes, calls, externs, extern_bodies)
    for name, row in generated.items():
        if row["aten_ops"] is None and name in call_site_sources:
            row["source_nodes"], row["aten_ops"] = call_site_sources[name]
        if name in handles:
            row["debug_handle"] = handles[name][0]
        details = row["details"]
        details["calls"] = calls[name]
        if len(handles.get(name, ())) > 1:
            details["debug_handles"] = handles[name]
        row["details"] = orjson.dumps(details).decode()
        if row["backend"] in BACKEND_DEVICES:
            devices[BACKEND_DEVICES[row["backend"]]] += 1

    add_kernels(parsed, generated, externs)
    if call_buffers:
        parsed.facts["call_buffers"] = call_buffers
    if saw_call:
        parsed.facts["partitions"] = partitions
    if not saw_call:
        parsed.problem("no `def call(` found: cut short, or not Inductor output code")
    device_facts(parsed, generated, devices)
    m = _BENCHMARK_NAME.match(text, max(text.rfind("compiled_module_main("), 0))
    if m and m["name"] != "None":
        parsed.facts["benchmark_model"] = m["name"]
    if said := from_output_code(text, "output code"):
        parsed.facts["caches_said"] = said
    return parsed


def _count_subgraph_launches(subgraph_calls: dict[str, Counter[str]], invokes: dict[str, Counter[str]],
                             calls: Counter[str], externs: list[KernelRow], extern_bodies: list[str]) -> None:
    """Adds the launches of the kernels that subgraph functions call to `calls`, once per time `call`
    (or a partition) invokes the subgraph, directly or through another; an extern site of a subgraph
    keeps one row (a site) and says which subgraph it is in and how often it runs a call."""
    times: dict[str, int] = {}

    def runs(fn: str, seen: frozenset[str]) -> int:
        if fn not in times:
            callers = [(caller, n[fn]) for caller, n in invokes.items() if fn in n and caller not in seen]
            # a subgraph nothing here invokes (its caller is not in this code) runs at least once
            times[fn] = sum(n * (runs(c, seen | {fn}) if c else 1) for c, n in callers) if callers else 1
        return times[fn]

    for fn, launched in subgraph_calls.items():
        k = runs(fn, frozenset({fn}))
        for name, n in launched.items():
            calls[name] += n * k
    for row, fn in zip(externs, extern_bodies, strict=True):
        if fn:
            row["details"] = orjson.dumps({"subgraph": fn, "calls": runs(fn, frozenset({fn}))}).decode()


def kernel_text(text: str, name: str, line: int | None) -> str | None:
    """The source of generated kernel `name` as parse_output_code reads it (the text inside its
    definition's triple quotes), from the graph's output code: at its definition line `line`
    (kernels.line), else wherever `name` is defined; None when not defined there or not closed."""
    text = plain_line_breaks(text)
    start = offset_of_line(text, line) if line else -1
    if start == -1 or not text.startswith(f"{name} = async_compile.", start):
        found = re.search(rf"^{re.escape(name)} = async_compile\.\w+\(", text, re.M)
        if found is None:
            return None
        start = found.start()
    end = text.find("\n", start)
    end = len(text) if end == -1 else end
    line_text = text[start:end]
    m = _DEFINITION.match(line_text)
    if m is None:
        return None
    body, closing, _ = _kernel_source(text, start, line_text, line_text.find(QUOTES, m.end()), end + 1)
    return body if closing is not None else None


def _statement_end(text: str, start: int) -> int:
    """Where a module-level call that opens at `start` ends: at its `)` line, which Inductor writes
    at column 0 (the end of the text for one cut short)."""
    end = text.find("\n)", start)
    return len(text) if end == -1 else end


def _kernel_source(text: str, line_start: int, line: str, start: int, after: int) -> tuple[str | None, str | None, int]:
    """Text inside the definition's triple quotes, the closing line (from the quotes on), and where
    the line after it starts. `line` starts at `line_start`; the next line at `after`."""
    if start == -1:
        return None, line, after  # e.g. a multi-kernel wrapper: no inline source
    rest = line[start + 3 :]
    end = rest.find(QUOTES)
    if end != -1:
        return rest[:end], rest[end:], after
    close = text.find(QUOTES, after) if after < len(text) else -1
    if close == -1:
        return None, None, len(text)
    eol = text.find("\n", close)
    eol = len(text) if eol == -1 else eol
    begin = line_start + start + 3 if rest else after  # the source starts on the next line
    return text[begin:close], text[close:eol], eol + 1


def _last_source_nodes(text: str, start: int, end: int) -> SourceNodes | None:
    """The lists of the last `Source Nodes` comment line in text[start:end] that parses."""
    at = text.rfind(SOURCE_NODES_TAG, start, end)
    while at != -1:
        line_start = text.rfind("\n", start, at) + 1 or start
        line_end = text.find("\n", at, end)
        m = SOURCE_NODES.match(text[line_start:end if line_end == -1 else line_end])
        if m:
            return source_node_lists(m)
        at = text.rfind(SOURCE_NODES_TAG, start, line_start)
    return None
