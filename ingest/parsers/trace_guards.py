"""Readers of Dynamo's guards: the C++ guard tree (`dynamo_cpp_guards_str`) and the old JSON list (`dynamo_guards`)."""

from __future__ import annotations

import re

import orjson

from inductor_warehouse.ingest.rows import Json, Parsed
from inductor_warehouse.ingest.parsers.compile_ids import without_attempt
from inductor_warehouse.ingest.parsers.trace_caches import settle_lookups
from inductor_warehouse.ingest.parsers.trace_events import Compiles
from inductor_warehouse.ingest.parsers.trace_log import TraceLog

# a leaf guard line; those after the first are found by their newline, which is cheaper than `^`
# in MULTILINE mode, tried at every character
_LEAF_GUARD = re.compile(r"[| ]*\+- [A-Z][A-Z0-9_]*:")
_LEAF_GUARD_AFTER_NEWLINE = re.compile(r"\n[| ]*\+- [A-Z][A-Z0-9_]*:")
# a tensor guard's dispatch keys start with the tensor's backend: `DispatchKeySet(CPU, BackendSelect, ...)`
_GUARD_BACKEND = re.compile(r"DispatchKeySet\((CPU|CUDA|XPU|MPS|HPU)\b")


def read_cpp_guards(log: TraceLog, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    guard_row(log.parsed, cid, *log.text_and_md5(data), is_json_list=False)


def read_json_guards(compiles: Compiles, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    # Dynamo builds a compile's guards after its backend returned, so they say the compile finished
    # in releases (2.3) that log no compilation_metrics
    compiles.guarded.add(without_attempt(cid))
    settle_lookups(compiles.caches, cid, ended=True)
    text, md5 = compiles.log.text_and_md5(data)
    guard_row(compiles.log.parsed, cid, text, md5, is_json_list=True)
    facts = compiles.log.parsed.facts
    # the device of a guarded input tensor: what a run whose code came from a cache (none logged) ran on
    if "tensor_device" not in facts and (m := _GUARD_BACKEND.search(text)) is not None:
        facts["tensor_device"] = m.group(1).lower()


def guard_row(parsed: Parsed, compile_id: str | None, text: str, text_md5: str | None, is_json_list: bool) -> None:
    """guard_count = leaf guards of the C++ guard tree (`+- TENSOR_MATCH: ...`, upper-case kind),
    GuardManager nodes not counted; for the old JSON `dynamo_guards` kind, the list length.
    compilation_metrics.guard_count counts Dynamo Guard objects instead, which can expand to
    several leaves, so the two differ. `text_md5`: the md5 of the text's UTF-8 bytes when known
    (the tree's key in guard_trees), else None."""
    if is_json_list:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            value = None
        count = len(value) if isinstance(value, list) else None
    else:
        count = len(_LEAF_GUARD_AFTER_NEWLINE.findall(text)) + (_LEAF_GUARD.match(text) is not None)
    parsed.add("guards", {"compile_id": compile_id, "guard_count": count, "text": text, "tree_hash": text_md5})
