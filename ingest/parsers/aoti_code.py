"""AOTInductor's code: the debug tree's `output_code.cpp`, and the trace's `inductor_aot_wrapper_code`
and `inductor_aot_kernel_code` (read together as one text)."""

from __future__ import annotations

import re
from collections import Counter

import orjson

from inductor_warehouse.ingest.parsers.kernel_rows import (DEVICE_STR, HANDLE, HANDLE_TAG, QUOTES, SOURCE_NODES,
                                                           SOURCE_NODES_TAG, add_kernels, device_facts, extern_row,
                                                           generated_row, plain_line_breaks, source_node_lists)
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
        body_start = m.end()
        close = text.find(QUOTES, body_start)
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
            d = DEVICE_STR.search(closing)
            if d:
                devices[d["device"]] += 1
        if m["name"] not in generated:
            generated[m["name"]] = generated_row(m["name"], "triton", len(generated), None, source, lineno, closing)
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
