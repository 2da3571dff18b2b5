"""AOTInductor's code: the debug tree's `output_code.cpp`, and the trace's `inductor_aot_wrapper_code`
and `inductor_aot_kernel_code` (read together as one text)."""

from __future__ import annotations

import re
from collections import Counter

import orjson

from inductor_warehouse.ingest.parsers.kernel_rows import (DEVICE_STR, HANDLE, HANDLE_TAG, QUOTES, SOURCE_NODES,
                                                           SOURCE_NODES_TAG, add_kernels, device_facts, extern_row,
                                                           generated_row, offset_of_line, plain_line_breaks, source_node_lists)
from inductor_warehouse.ingest.rows import KernelRow, Parsed

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


def parse_aoti_code(text: str) -> Parsed:  # noqa: C901 - one loop over the C++ wrapper's line kinds
    """AOTInductor's C++ wrapper and kernels (the debug tree's `output_code.cpp`: the wrapper, then
    the kernel file). rows['kernels'] as parse_output_code's: one row per generated kernel (C++
    `extern "C"` definitions, Triton kernels embedded in comments), one per extern call site inside
    run_impl (`aoti_torch_<device>_<op>`, the proxy executor's custom-op calls). No AOT ID line:
    no aot_id or phase facts."""
    parsed = Parsed()
    text = plain_line_breaks(text)
    generated: dict[str, KernelRow] = {}
    devices: Counter[str] = Counter()
    for m in _AOTI_TRITON.finditer(text):
        lineno = text.count("\n", 0, m.start()) + 1
        source, closing = _triton_source(text, m)
        if closing is None:
            parsed.problem(f"kernel {m['name']}: source string never closed (file cut short?)", lineno)
        else:
            d = DEVICE_STR.search(closing)
            if d:
                devices[d["device"]] += 1
        if m["name"] not in generated:
            generated[m["name"]] = generated_row(m["name"], "triton", len(generated), None, source, lineno, closing)
    for m in _AOTI_CPP_KERNEL.finditer(text):
        name = m["name"]
        source, end = _cpp_source(text, m)
        if source is None or name in generated:
            continue  # a declaration; or the same kernel again
        lineno = text.count("\n", 0, m.start()) + 1
        if end == -1:
            parsed.problem(f"kernel {name}: body never closed (file cut short?)", lineno)
        generated[name] = generated_row(name, "cpp", len(generated), None, source, lineno, None if end == -1 else "}")
        devices["cpu"] += 1

    externs: list[KernelRow] = []
    calls: Counter[str] = Counter()
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
            if SOURCE_NODES_TAG in note:
                m = SOURCE_NODES.match(note)  # type: ignore[assignment]
                if m:
                    comment = source_node_lists(m)
            elif HANDLE_TAG in note:
                m = HANDLE.match(note)  # type: ignore[assignment]
                if m:
                    handle = (m["kernel"], int(m["handle"]))
            continue
        m = _AOTI_EXTERN.search(line)  # type: ignore[assignment]
        if m:
            callee = m["callee"]
            debug_handle = handle[1] if handle and handle[0] == callee else None
            externs.append(extern_row(callee, len(externs), comment, debug_handle, lineno))
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
    add_kernels(parsed, generated, externs)
    for m in _AOTI_EXTERN.finditer(text):
        device = m["callee"].split("_")[2]
        if device in ("cpu", "cuda", "xpu", "mps", "mtia"):
            devices[device] += 1
    if not saw_run:
        parsed.problem("no `AOTInductorModel::run_impl(` found: cut short, or not AOTInductor code")
    device_facts(parsed, generated, devices)
    parsed.facts["aoti"] = True
    return parsed


def kernel_text(text: str, name: str, line: int | None) -> str | None:
    """The source of generated kernel `name` as parse_aoti_code reads it: the Triton kernel whose
    `async_compile.triton('<name>', ...` comment starts at line `line` (kernels.line), or the C++
    definition `extern "C" void <name>(...) {...}` there; else the first such definition of `name`.
    None when `name` is not defined in text, or its definition is cut short."""
    text = plain_line_breaks(text)
    at = offset_of_line(text, line) if line else -1
    for pattern in (_AOTI_TRITON, _AOTI_CPP_KERNEL):
        found = pattern.match(text, at) if at != -1 else None
        candidates = [found] if found is not None and found["name"] == name else []
        candidates += [m for m in pattern.finditer(text) if m["name"] == name]
        for m in candidates:
            if pattern is _AOTI_TRITON:
                source, closing = _triton_source(text, m)
                return source if closing is not None else None
            source, end = _cpp_source(text, m)
            if source is not None:  # a definition, not the declaration before it
                return source if end != -1 else None
    return None


def _triton_source(text: str, m: re.Match[str]) -> tuple[str | None, str | None]:
    """A Triton kernel carried in comments (an _AOTI_TRITON match): its source with the comment's
    indent taken off each line, and its closing line from the quotes on; Nones when never closed."""
    close = text.find(QUOTES, m.end())
    if close == -1:
        return None, None
    indent = m["indent"]
    source = "\n".join(line[len(indent):] if line.startswith(indent) else line
                       for line in text[m.end():close].split("\n"))
    eol = text.find("\n", close)
    return source, text[close: len(text) if eol == -1 else eol]


def _cpp_source(text: str, m: re.Match[str]) -> tuple[str | None, int]:
    """A C++ kernel (an _AOTI_CPP_KERNEL match): its text to the `}` that closes it at a line start,
    and where that closing line break is (-1: never closed, the text to its end); None for a
    declaration."""
    params_end = text.find(")", m.end())
    after = text[params_end + 1: params_end + 64].lstrip() if params_end != -1 else ""
    if not after.startswith("{"):
        return None, -1
    end = text.find("\n}", params_end)
    return text[m.start(): len(text) if end == -1 else end + 2], end
