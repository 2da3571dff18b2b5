"""Readers of the shape environment's records (shape_events), the log's string table and Dynamo's tensor descriptions."""

from __future__ import annotations

from dataclasses import dataclass, field

import re

from inductor_warehouse.ingest.parsers.trace_log import TraceLog
from inductor_warehouse.ingest.parsers.trace_values import as_int, as_str
from inductor_warehouse.ingest.parsers.user_code import is_library
from inductor_warehouse.ingest.rows import Json, Parsed

SHAPE_KINDS = {"create_symbol": "symbol", "create_unbacked_symbol": "unbacked_symbol",
               "symbolic_shape_specialization": "specialization", "guard_added_fast": "guard", "guard_added": "guard"}
_TENSOR_DEVICE = re.compile(r"device\(type='(\w+)'")


@dataclass
class Shapes:
    """What the shape readers keep: the log's `str` records, file names a stack refers to by index."""
    log: TraceLog
    strings: dict[int, str] = field(default_factory=dict)


def read_str(shapes: Shapes, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    """One entry of the log's file-name table, which stacks refer to by index."""
    if isinstance(meta, list) and len(meta) == 2 and isinstance(meta[1], int):
        shapes.strings[meta[1]] = str(meta[0])


def read_shape(shapes: Shapes, lineno: int, meta: Json, cid: str | None, data: bytes, kind: str) -> None:
    shape_row(shapes.log.parsed, kind, meta, cid, shapes.strings, lineno)


def read_describe_tensor(shapes: Shapes, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    # the device of the first tensor Dynamo saw: what a run killed before Inductor wrote code ran on
    if "tensor_device" not in shapes.log.parsed.facts and isinstance(meta, dict):
        m = _TENSOR_DEVICE.match(str(meta.get("device") or ""))
        if m:
            shapes.log.parsed.facts["tensor_device"] = m.group(1)


def shape_row(parsed: Parsed, kind: str, meta: Json, compile_id: str | None, strings: dict[int, str], line: int) -> None:
    """One shape_events row for a shape-environment record (SHAPE_KINDS)."""
    if not isinstance(meta, dict):
        parsed.counters[f"{kind}_unusable"] += 1
        return
    sources = meta.get("sources")
    source = meta.get("source") if meta.get("source") is not None else (
        ", ".join(str(s) for s in sources) if isinstance(sources, list) else None)
    if kind in ("create_symbol", "create_unbacked_symbol"):
        value, expr = meta.get("val"), meta.get("vr")
    else:
        value, expr = meta.get("value"), meta.get("expr")
    user_file, user_line, user_code = user_frame(meta.get("user_stack"), strings)
    parsed.add("shape_events", {
        "compile_id": compile_id, "kind": SHAPE_KINDS[kind], "symbol": as_str(meta.get("symbol")),
        "source": as_str(source), "value": as_str(value), "expr": as_str(expr), "reason": as_str(meta.get("reason")),
        "user_file": user_file, "user_line": user_line, "user_code": user_code, "line": line,
    })


def user_frame(stack: Json, strings: dict[int, str]) -> tuple[str | None, int | None, str | None]:
    """The innermost frame of a user stack that is not library code (file names are indices into
    the log's `str` records), else its innermost frame."""
    if not isinstance(stack, list) or not stack:
        return None, None, None
    frames = [f for f in stack if isinstance(f, dict)]
    named = []
    for f in frames:
        filename = f.get("filename")  # an index into the `str` records, or (older logs) the name itself
        named.append((strings.get(filename, filename) if isinstance(filename, int) else filename, f))
    user = [(name, f) for name, f in named if isinstance(name, str) and not is_library(name)]
    if not (user or named):
        return None, None, None
    name, frame = (user or named)[-1]
    return as_str(name), as_int(frame.get("line")), as_str(frame.get("loc"))
