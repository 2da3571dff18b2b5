"""output_code.py, and the trace's `inductor_output_code` payload (the same text).

facts: aot_id (int) and phase from line 1 `# AOT ID: ['0_forward']` (absent: no facts); device
(`cuda`, `cpu`, ...: from Triton `device_str=`, C++ kernels, or the wrapper's `empty_strided_<dev>`
allocations, a non-CPU device winning); backend (the backend of most generated kernels).

rows['kernels'], two kinds:

* generated kernels, one per definition `<name> = async_compile.<method>(...)`, numbered by `site`
  in definition order. backend: `triton` for `.triton`, `cpp` for `.cpp`/`.cpp_pybinding`, else the
  method name. category: Triton's `@triton_heuristics.<kind>` decorator name as written
  (pointwise, reduction, persistent_reduction, template, foreach, split_scan, ...), else the
  name prefix (poi/red/per/tem/for/spl); C++: `reduction` when the code keeps a reduction
  accumulator (`tmp_acc<N>`), else `pointwise`. aten_ops/source_nodes come from the
  `Source Nodes: [...], Original ATen: [...]` comment above the definition, else from the one at
  its first call (NULL when neither exists; empty names are dropped). debug_handle is the
  first `[Provenance debug handles]` comment naming it. `source` is the text inside the triple
  quotes (the loader moves it to kernel_sources); an unterminated string keeps the row with
  source and source_hash NULL, and records a problem.
* extern call sites inside `def call(` (module level in 2.6, a `Runner` method from 2.13) and
  inside every cudagraph partition `def partition_<N>(args)` (facts["partitions"] counts them):
  statements calling `extern_kernels.*`, `torch.ops.<ns>.<op>...` or the `aten.<op>.<overload>`
  shorthand, numbered by `site` in call order, separately from generated kernels. Fallbacks
  that only look auxiliary are launches too and are counted: random seeds
  (`aten.randint.low_out`), in-place scatters (`aten.scatter_reduce_.two`). On the whole corpus
  these sites are exactly the `.node.kernel` lines of ir_post_fusion.txt. kernel_name is the
  callee as written, which is also how provenance handles name it. Inductor's memory helpers
  (`torch.ops.inductor._alloc_from_pool`, `resize_storage_bytes_`) are not launches: left out.

Calls of generated kernels (`name.run(...)`, `name(...)`) make no rows; their count goes into
the kernel's details as `calls`.
"""

from __future__ import annotations

import re
from collections import Counter

import orjson

from inductor_warehouse.ingest.normalize import kernel_signature, source_hash
from inductor_warehouse.ingest.rows import Parsed

_AOT_ID = re.compile(r"^# AOT ID: \['(?P<aot_id>\d+)_(?P<phase>\w+)'\]")
# the `__main__` block ends with `compiled_module_main('<name>', ...)`: the model of the process's
# `--only <name>` argument (the benchmark harness's), 'None' without one
_BENCHMARK_NAME = re.compile(r"compiled_module_main\('(?P<name>[^'\n]+)'")
_DEFINITION = re.compile(r"^(?P<name>\w+) = async_compile\.(?P<method>\w+)\(")
_BUFFER = re.compile(r"\bbuf\d+\b")
# the wrapper's bodies: `call()`, and with cudagraph partitions (`graph_partition`, 2.9+) each
# `partition_<N>(args)` it hands to a cudagraph, which holds the partition's launches
_CALL_DEF = re.compile(r"^(?P<indent>\s*)def (?:call|(?P<partition>partition_\d+))\(")
_SOURCE_NODES = re.compile(r"#\s*(?:\w+ )*Source Nodes: \[(?P<nodes>.*?)\], Original ATen: \[(?P<aten>.*)\]\s*$")
_SOURCE_NODES_TAG = "Source Nodes: ["
_COMMENT_BLOCK = re.compile(r"#[^\n]*(?:\n#[^\n]*)*")  # lines that start with "#", from one of them
_HANDLE_TAG = "[Provenance debug handles]"
_HANDLE = re.compile(r"#\s*\[Provenance debug handles\] (?P<kernel>.+):(?P<handle>\d+)\s*$")
_STATEMENT_CALL = re.compile(r"^\s+(?:\w+(?:, \w+)* = )?(?P<callee>[A-Za-z_][\w.]*)\(")
_EXTERN = re.compile(r"^(?:extern_kernels\.\w+|torch\.ops\.\w+\.[\w.]+|aten\.\w+[\w.]*)$")
# inductor-namespace helpers that manage memory rather than launch work
_NOT_LAUNCHES = frozenset({"torch.ops.inductor._alloc_from_pool", "torch.ops.inductor.resize_storage_bytes_"})
_ALLOC_DEVICE = re.compile(r"empty_strided_(?P<device>[a-z]+)\(")
_DEVICE_STR = re.compile(r"device_str='(?P<device>[a-z]+)")

_HEURISTIC = re.compile(r"^@triton_heuristics\.(?P<kind>\w+)\(", re.M)
_TRITON_PREFIX = re.compile(r"^triton_(?P<prefix>[a-z]{3})_")
_PREFIX_CATEGORY = {
    "poi": "pointwise", "red": "reduction", "per": "persistent_reduction", "tem": "template",
    "for": "foreach", "spl": "split_scan",
}
_CPP_REDUCTION = re.compile(r"\btmp_acc\d+")
_SIZE_HINTS = re.compile(r"size_hints=(?P<hints>\{[^}]*\}|\[[^\]]*\])")
_META_INT = {key: re.compile(rf"'{key}': (?P<v>\d+)") for key in ("num_load", "num_store", "num_reduction")}
# detail -> (the text before its value, the value's pattern, the text after it): found by str.find,
# several times faster than a regex search of the whole decorator for each
_DETAILS = {
    "reduction_hint": ("reduction_hint=ReductionHint.", re.compile(r"\w+"), ""),
    "tile_hint": ("tile_hint=TileHint.", re.compile(r"\w+"), ""),
    "num_warps": ("\nnum_warps=", re.compile(r"\d+"), ""),  # at a line start
    "num_stages": ("\nnum_stages=", re.compile(r"\d+"), ""),
    "grid_type": ("'grid_type': '", re.compile(r"\w+"), "'"),
}
_MUTATED = re.compile(r"'mutated_arg_names': \[(?P<v>[^\]]*)\]")
_BACKENDS = {"triton": "triton", "cpp": "cpp", "cpp_pybinding": "cpp"}
_QUOTES = "'''"
_ODD_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # str.splitlines breaks lines there too
_JIT = "\n@triton.jit"


def aot_graph_id(first_line: str) -> str | None:
    """`<aot_id>_<phase>` from the `# AOT ID: ['0_forward']` first line, without parsing the rest."""
    m = _AOT_ID.match(first_line)
    return f"{m['aot_id']}_{m['phase']}" if m else None


def parse_output_code(text: str) -> Parsed:
    parsed = Parsed()
    if any(c in text for c in _ODD_BREAKS):
        text = "\n".join(text.splitlines())  # line breaks as str.splitlines knows them, made b"\n"
    m = _AOT_ID.match(text)
    if m:
        parsed.facts["aot_id"] = int(m["aot_id"])
        parsed.facts["phase"] = m["phase"]

    generated: dict[str, dict] = {}
    externs: list[dict] = []
    calls: Counter = Counter()
    call_buffers: list[tuple[str, list[str]]] = []  # generated-kernel launches in call order
    handles: dict[str, list[int]] = {}
    call_site_sources: dict[str, tuple] = {}
    devices: Counter = Counter()
    comment: tuple | None = None  # source-node comment waiting for its definition or call
    handle: tuple | None = None  # provenance handle waiting for its call
    call_indent: int | None = None
    saw_call = False
    partitions = 0

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
                    if _SOURCE_NODES_TAG in stripped:
                        m = _SOURCE_NODES.match(stripped)
                        if m:
                            comment = _lists(m)
                    elif _HANDLE_TAG in stripped:
                        m = _HANDLE.match(stripped)
                        if m:
                            handle = (m["kernel"], int(m["handle"]))
                    continue
                if "empty_strided_" in stripped:
                    for m in _ALLOC_DEVICE.finditer(stripped):
                        devices[m["device"]] += 1
                m = _STATEMENT_CALL.match(line)
                if m is None:
                    continue
                callee = m["callee"]
                name = callee[:-4] if callee.endswith(".run") else callee
                if name in generated:
                    calls[name] += 1
                    call_buffers.append((name, _BUFFER.findall(line)))
                    if handle and handle[0] == name:
                        handles.setdefault(name, []).append(handle[1])
                    if comment:
                        call_site_sources.setdefault(name, comment)
                    comment = handle = None
                elif _EXTERN.match(callee) and callee not in _NOT_LAUNCHES:
                    debug_handle = handle[1] if handle and handle[0] == callee else None
                    externs.append(_extern_row(callee, len(externs), comment, debug_handle, lineno))
                    comment = handle = None
                continue

        if line.startswith("#"):
            # the whole block of comment lines at once (a kernel's node-to-ATen mapping runs to dozens)
            block_end = _COMMENT_BLOCK.match(text, line_start).end()
            lineno += text.count("\n", line_start, block_end)
            pos = block_end + 1
            found = _last_source_nodes(text, line_start, block_end)
            if found:
                comment = found
            continue
        m = _DEFINITION.match(line)
        if m and m["method"] != "wait":
            start = line.find(_QUOTES, m.end())
            body, closing, after = _kernel_source(text, line_start, line, start, pos)
            row = _generated_row(m["name"], m["method"], len(generated), comment, body, lineno, closing)
            if start != -1 and closing is None:
                parsed.problem(f"kernel {m['name']}: source string never closed (file cut short?)", lineno)
            if after != pos:
                lineno += text.count("\n", pos, after) if after <= n else text.count("\n", pos) + 1
                pos = after
            generated[m["name"]] = row
            if closing:
                d = _DEVICE_STR.search(closing)
                if d:
                    devices[d["device"]] += 1
            comment = None
            continue
        m = _CALL_DEF.match(line)
        if m:
            call_indent = len(m["indent"])
            saw_call = True
            partitions += m["partition"] is not None
            comment = handle = None
            continue
        if line.strip():
            comment = None

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
        if row["backend"] == "cpp":
            devices["cpu"] += 1

    parsed.rows["kernels"] = list(generated.values()) + externs
    if collectives := collective_rows(externs):
        parsed.rows["collectives"] = collectives
    if call_buffers:
        parsed.facts["call_buffers"] = call_buffers
    if saw_call:
        parsed.facts["partitions"] = partitions
    if not saw_call:
        parsed.problem("no `def call(` found: cut short, or not Inductor output code")
    _device_facts(parsed, generated, devices)
    m = _BENCHMARK_NAME.match(text, max(text.rfind("compiled_module_main("), 0))
    if m and m["name"] != "None":
        parsed.facts["benchmark_model"] = m["name"]
    return parsed


def _kernel_source(text: str, line_start: int, line: str, start: int, after: int) -> tuple[str | None, str | None, int]:
    """Text inside the definition's triple quotes, the closing line (from the quotes on), and where
    the line after it starts. `line` starts at `line_start`; the next line at `after`."""
    if start == -1:
        return None, line, after  # e.g. a multi-kernel wrapper: no inline source
    rest = line[start + 3 :]
    end = rest.find(_QUOTES)
    if end != -1:
        return rest[:end], rest[end:], after
    close = text.find(_QUOTES, after) if after < len(text) else -1
    if close == -1:
        return None, None, len(text)
    eol = text.find("\n", close)
    eol = len(text) if eol == -1 else eol
    begin = line_start + start + 3 if rest else after  # the source starts on the next line
    return text[begin:close], text[close:eol], eol + 1


def _last_source_nodes(text: str, start: int, end: int) -> tuple | None:
    """The lists of the last `Source Nodes` comment line in text[start:end] that parses."""
    at = text.rfind(_SOURCE_NODES_TAG, start, end)
    while at != -1:
        line_start = text.rfind("\n", start, at) + 1 or start
        line_end = text.find("\n", at, end)
        m = _SOURCE_NODES.match(text[line_start:end if line_end == -1 else line_end])
        if m:
            return _lists(m)
        at = text.rfind(_SOURCE_NODES_TAG, start, line_start)
    return None


def _lists(m: re.Match) -> tuple[list[str], list[str]]:
    return _names(m["nodes"]), _names(m["aten"])


def _names(text: str) -> list[str]:
    return [x for x in map(str.strip, text.split(",")) if x]


def _generated_row(name, method, site, comment, source, lineno, closing) -> dict:
    backend = _BACKENDS.get(method, method)
    details: dict = {}
    category = num_load = num_store = num_reduction = size_hints = None
    if source is not None:
        if backend == "triton":
            header = _decorator_text(source)
            category = _triton_category(name, header)
            num_load, num_store, num_reduction = (_meta_int(header, key) for key in _META_INT)
            size_hints = _size_hints(header)
            lines = "\n" + header  # a `before` of "\n..." then finds a value at a line start, the first too
            for key, detail in _DETAILS.items():
                v = _detail(lines, *detail)
                if v is not None:
                    details[key] = int(v) if v.isdigit() else v
            m = _MUTATED.search(header)
            if m:
                details["mutated_arg_names"] = [x.strip().strip("'") for x in m["v"].split(",") if x.strip()]
        elif backend == "cpp":
            category = "reduction" if _CPP_REDUCTION.search(source) else "pointwise"
    elif backend == "triton":
        category = _triton_category(name, "")
    nodes, aten = comment if comment else (None, None)
    return {
        "kernel_name": name,
        "generated": True,
        "backend": backend,
        "category": category,
        "aten_ops": aten,
        "source_nodes": nodes,
        "num_load": num_load,
        "num_store": num_store,
        "num_reduction": num_reduction,
        "size_hints": size_hints,
        "signature": kernel_signature(name),
        "source_hash": source_hash(source, name) if source is not None and closing is not None else None,
        "site": site,
        "debug_handle": None,
        "line": lineno,
        "details": details,  # serialised once call counts are known
        "source": source if closing is not None else None,
    }


# collective ops among the extern calls: functional collectives (`torch.ops._c10d_functional.*`,
# their C shim `aoti_torch_<device>__c10d_functional_*`), legacy c10d ops, symmetric memory
_COLLECTIVE = re.compile(r"(?:\.|_)(?:_c10d_functional(?:_autograd)?|c10d|symm_mem)[._]")


def collective_rows(kernels: list[dict]) -> list[dict]:
    """rows['collectives']: the collective extern calls, in call order."""
    return [{"seq": i, "op": k["kernel_name"], "source": "output_code", "compile_id": None, "line": k["line"]}
            for i, k in enumerate(k for k in kernels if not k["generated"] and _COLLECTIVE.search(k["kernel_name"]))]


def _extern_row(callee: str, site: int, comment, debug_handle, lineno: int) -> dict:
    nodes, aten = comment if comment else (None, None)
    return {
        "kernel_name": callee,
        "generated": False,
        "backend": "extern",
        "category": "extern",
        "aten_ops": aten,
        "source_nodes": nodes,
        "num_load": None,
        "num_store": None,
        "num_reduction": None,
        "size_hints": None,
        "signature": callee,
        "source_hash": None,
        "site": site,
        "debug_handle": debug_handle,
        "line": lineno,
        "details": None,
        "source": None,
    }


def _decorator_text(source: str) -> str:
    """The imports and heuristics decorator: everything the metadata is read from."""
    end = source.find(_JIT)
    return source if end == -1 else source[:end]


def _detail(text: str, before: str, value: re.Pattern, after: str) -> str | None:
    """The first value written right after `before` (and followed by `after`) in `text`."""
    at = text.find(before)
    while at != -1:
        m = value.match(text, at + len(before))
        if m and text.startswith(after, m.end()):
            return m.group()
        at = text.find(before, at + 1)
    return None


def _triton_category(name: str, source: str) -> str | None:
    m = _HEURISTIC.search(source)
    if m:
        return m["kind"]
    m = _TRITON_PREFIX.match(name)
    return _PREFIX_CATEGORY.get(m["prefix"]) if m else None


def _meta_int(source: str, key: str) -> int | None:
    m = _META_INT[key].search(source)
    return int(m["v"]) if m else None


def _size_hints(source: str) -> str | None:
    """`{'x': 8192, 'r0_': 1024}` (a list before 2.6) as JSON text."""
    m = _SIZE_HINTS.search(source)
    if m is None:
        return None
    try:
        return orjson.dumps(orjson.loads(m["hints"].replace("'", '"'))).decode()
    except orjson.JSONDecodeError:
        return None


def _device_facts(parsed: Parsed, generated: dict, devices: Counter) -> None:
    accelerators = [d for d, _ in devices.most_common() if d != "cpu"]
    if accelerators:
        parsed.facts["device"] = accelerators[0]
    elif devices:
        parsed.facts["device"] = "cpu"
    backends = Counter(row["backend"] for row in generated.values())
    if backends:
        parsed.facts["backend"] = backends.most_common(1)[0][0]


# ---- AOTInductor: output_code.cpp, and the trace's inductor_aot_wrapper_code / _kernel_code ------

# The wrapper runs the model in `AOTInductorModel::run_impl(` (and `_const_run_impl(` for constant
# folding) until the `}` that closes it at the line start.
_AOTI_RUN = re.compile(r"^\S.*AOTInductorModel::_?(?:const_)?run_impl\(")
# C++ kernels: `extern "C" void <name>(` then the parameters; a definition, not a declaration, when
# the parameters close with `)` and a `{` follows (the wrapper declares each kernel once first)
_AOTI_CPP_KERNEL = re.compile(r'^extern "C"\s+void\s+(?P<name>\w+)\(', re.M)
# Triton kernels travel as comments: `async_compile.triton('<name>', '''...''', device_str=...)`
_AOTI_TRITON = re.compile(r"^(?P<indent>[ \t]*)async_compile\.triton\('(?P<name>\w+)', '''\n", re.M)
# ATen fallbacks through the C shim: `aoti_torch_<device>_<op>(`; custom ops through the proxy executor
_AOTI_EXTERN = re.compile(r"\b(?P<callee>aoti_torch_(?:cpu|cuda|xpu|mps|mtia)_\w+|aoti_torch_proxy_executor_call_function)\(")
_AOTI_LAUNCH = re.compile(r"^\s+(?:call_)?(?P<name>\w+)\(")
_AOTI_COMMENT = "//"


def parse_aoti_code(text: str) -> Parsed:
    """AOTInductor's C++ wrapper and kernels (the debug tree's `output_code.cpp`: the wrapper, then
    the kernel file). rows['kernels'] as parse_output_code's: one row per generated kernel (C++
    `extern "C"` definitions, Triton kernels embedded in comments), one per extern call site inside
    run_impl (`aoti_torch_<device>_<op>`, the proxy executor's custom-op calls). No AOT ID line:
    no aot_id or phase facts."""
    parsed = Parsed()
    if any(c in text for c in _ODD_BREAKS):
        text = "\n".join(text.splitlines())
    generated: dict[str, dict] = {}
    devices: Counter = Counter()
    for m in _AOTI_TRITON.finditer(text):
        body_start = m.end()
        close = text.find(_QUOTES, body_start)
        lineno = text.count("\n", 0, m.start()) + 1
        if close == -1:
            parsed.problem(f"kernel {m['name']}: source string never closed (file cut short?)", lineno)
            source, closing = None, None
        else:
            indent = m["indent"]
            source = "\n".join(line[len(indent):] if line.startswith(indent) else line
                               for line in text[body_start:close].split("\n"))
            eol = text.find("\n", close)
            closing = text[close: len(text) if eol == -1 else eol]
            d = _DEVICE_STR.search(closing)
            if d:
                devices[d["device"]] += 1
        if m["name"] not in generated:
            generated[m["name"]] = _generated_row(m["name"], "triton", len(generated), None, source, lineno, closing)
    for m in _AOTI_CPP_KERNEL.finditer(text):
        name = m["name"]
        params_end = text.find(")", m.end())
        after = text[params_end + 1: params_end + 64].lstrip() if params_end != -1 else ""
        if not after.startswith("{") or name in generated:
            continue  # a declaration; or the same kernel again
        end = text.find("\n}", params_end)
        source = text[m.start(): len(text) if end == -1 else end + 2]
        lineno = text.count("\n", 0, m.start()) + 1
        if end == -1:
            parsed.problem(f"kernel {name}: body never closed (file cut short?)", lineno)
        generated[name] = _generated_row(name, "cpp", len(generated), None, source, lineno, None if end == -1 else "}")
        devices["cpu"] += 1

    externs: list[dict] = []
    calls: Counter = Counter()
    handles: dict[str, int] = {}
    comment = handle = None
    in_run = saw_run = False
    for lineno, line in enumerate(text.split("\n"), 1):
        if not in_run:
            if _AOTI_RUN.match(line):
                in_run = saw_run = True
            continue
        if line.startswith("}"):
            in_run = False
            continue
        stripped = line.strip()
        if stripped.startswith(_AOTI_COMMENT):
            note = "#" + stripped[2:]
            if _SOURCE_NODES_TAG in note:
                m = _SOURCE_NODES.match(note)
                if m:
                    comment = _lists(m)
            elif _HANDLE_TAG in note:
                m = _HANDLE.match(note)
                if m:
                    handle = (m["kernel"], int(m["handle"]))
            continue
        m = _AOTI_EXTERN.search(line)
        if m:
            callee = m["callee"]
            debug_handle = handle[1] if handle and handle[0] == callee else None
            externs.append(_extern_row(callee, len(externs), comment, debug_handle, lineno))
            comment = handle = None
            continue
        m = _AOTI_LAUNCH.match(line)
        if m and m["name"] in generated:
            name = m["name"]
            calls[name] += 1
            if handle and handle[0] == name:
                handles.setdefault(name, handle[1])
            row = generated[name]
            if comment and row["aten_ops"] is None:
                row["source_nodes"], row["aten_ops"] = comment
            comment = handle = None
    for name, row in generated.items():
        row["debug_handle"] = handles.get(name)
        row["details"] = orjson.dumps({**row["details"], "calls": calls[name]}).decode()
    parsed.rows["kernels"] = list(generated.values()) + externs
    if collectives := collective_rows(externs):
        parsed.rows["collectives"] = collectives
    for m in _AOTI_EXTERN.finditer(text):
        device = m["callee"].split("_")[2]
        if device in ("cpu", "cuda", "xpu", "mps", "mtia"):
            devices[device] += 1
    if not saw_run:
        parsed.problem("no `AOTInductorModel::run_impl(` found: cut short, or not AOTInductor code")
    _device_facts(parsed, generated, devices)
    parsed.facts["aoti"] = True
    return parsed
