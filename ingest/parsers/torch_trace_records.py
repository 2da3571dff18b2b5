"""Row builders for single TORCH_TRACE records: compilation metrics, graph breaks, recompiles,
failures, guards, kernel stack traces and chromium spans. Pure helpers of `torch_trace`.
"""

from __future__ import annotations

import re

import orjson

from inductor_warehouse.ingest.rows import Parsed

SOURCE = "torch_trace"

# compilations columns by type; values of another type are coerced or dropped so that every
# column keeps one Python type for the pyarrow bulk load.
_INT_COLS = (
    "co_firstlineno", "graph_op_count", "graph_node_count", "graph_input_count", "guard_count",
    "shape_env_guard_count", "start_time_us", "duration_us", "dynamo_cumulative_compile_time_us",
    "aot_autograd_cumulative_compile_time_us", "inductor_cumulative_compile_time_us",
    "inductor_code_gen_cumulative_compile_time_us", "triton_compile_time_us",
    "compile_time_autotune_time_us", "fail_user_frame_lineno",
)
_FLOAT_COLS = ("entire_frame_compile_time_s", "backend_compile_time_s", "inductor_compile_time_s", "code_gen_time_s")
_STR_COLS = (
    "co_name", "co_filename", "frame_key", "fail_type", "fail_reason", "fail_user_frame_filename", "pytorch_version",
    "inductor_config",  # JSON text already (torch writes it as a string); an object is serialised
)
_BOOL_COLS = ("is_forward", "has_guarded_code")
# left out of `record`: inductor_config is a column, inductor_provenance is the compile's
# inductor_provenance_tracking_kernel_stack_traces artifacts again (lineage); 90% of a record's bytes
KEPT_ELSEWHERE = frozenset({"inductor_config", "inductor_provenance"})
_CACHE_COUNTS = {
    "fx_cache_local_hits": "inductor_fx_local_cache_hit_count",
    "fx_cache_local_misses": "inductor_fx_local_cache_miss_count",
    "fx_cache_remote_hits": "inductor_fx_remote_cache_hit_count",
    "fx_cache_remote_misses": "inductor_fx_remote_cache_miss_count",
    "aot_cache_local_hits": "aotautograd_local_cache_hit_count",
    "aot_cache_local_misses": "aotautograd_local_cache_miss_count",
    "aot_cache_remote_hits": "aotautograd_remote_cache_hit_count",
    "aot_cache_remote_misses": "aotautograd_remote_cache_miss_count",
}

# Cache lookups logged as artifacts, across releases: `fx_graph_cache_{hit,miss,bypass}` (2.6+),
# `aotautograd_cache_{hit,miss,bypass}` (2.7+), `*_cache_hash` (2.4/2.5: the outcome, if any, is in
# the payload's cache_state), `fx_graph_bundled_cache_hit` (2.8+), `precompile_cache_bypass`,
# `dynamo_cache_*` (2.10+). The payload's cache_state wins over the name (names were edited by hand
# in a tlparse test log, payloads not).
CACHE_ARTIFACT = re.compile(r"^(fx_graph_bundled|fx_graph|aotautograd|precompile|dynamo)_cache_(\w+)$")
_CACHE_NAMES = {"fx_graph": "fx_graph", "fx_graph_bundled": "bundled_fx_graph", "aotautograd": "aot_autograd",
                "precompile": "precompile", "dynamo": "dynamo"}
_OUTCOME_WORDS = {"hit", "miss", "bypass", "disabled"}

# (metrics field, factor to µs). The timing name is the field without its unit suffix.
PHASE_FIELDS = (
    ("entire_frame_compile_time_s", 1e6),
    ("backend_compile_time_s", 1e6),
    ("inductor_compile_time_s", 1e6),
    ("code_gen_time_s", 1e6),
    ("dynamo_cumulative_compile_time_us", 1),
    ("aot_autograd_cumulative_compile_time_us", 1),
    ("inductor_cumulative_compile_time_us", 1),
    ("inductor_code_gen_cumulative_compile_time_us", 1),
    ("backward_cumulative_compile_time_us", 1),
    ("triton_compile_time_us", 1),
    ("compile_time_autotune_time_us", 1),
    ("runtime_triton_autotune_time_us", 1),
)
_PHASE_NAMES = tuple((f, f.rsplit("_", 1)[0], k) for f, k in PHASE_FIELDS)

_ATTEMPT_SUFFIX = re.compile(r"_\d+$")
_GRAPH_BREAK_AT = re.compile(r"^Graph break in user code at (.+):(\d+)\s*$")
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
# a recompile reason starts with the id of the compile whose guards failed: `0/0: ...`, `!0/7/0: ...`
_REASON_START = re.compile(r"^!?[\d-]+(?:/[\d-]+)+(?:_\d+)?: ")
# a leaf guard line; the one after a newline is found by searching for the newline, 4x faster
# than `^` in MULTILINE mode, which is tried at every character
_LEAF_GUARD = re.compile(r"[| ]*\+- [A-Z][A-Z0-9_]*:")
_LEAF_GUARD_AFTER_NEWLINE = re.compile(r"\n[| ]*\+- [A-Z][A-Z0-9_]*:")
_ERROR_TAIL = ("from user code:", "Set TORCH")
# Exceptions Dynamo treats as soft failures (convert_frame's `soft_fail`): the frame is skipped and
# runs eagerly. Any other failure falls back to eager only when errors are suppressed.
_SOFT_FAILURES = frozenset({"Unsupported", "UserError", "CacheLimitExceeded", "RecompileLimitExceeded"})
_LIBRARY_PARTS = ("/site-packages/", "/dist-packages/", "/torch/", "/lib/python")


def _as_int(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


def _as_float(v):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    return None


def _as_str(v):
    if v is None or isinstance(v, str):
        return v
    return orjson.dumps(v).decode()


def _as_bool(v):
    return v if isinstance(v, bool) else None


def compile_id_of(frame_id, frame_compile_id, attempt, ca_id) -> str | None:
    """The compile id as the trace writes it, without brackets: `0/0`, `1/0_1`, `!0/7/0`, `!0/-/-`."""
    if frame_id is None and frame_compile_id is None and ca_id is None:
        return None
    cid = f"{'-' if frame_id is None else frame_id}/{'-' if frame_compile_id is None else frame_compile_id}"
    if ca_id is not None:
        cid = f"!{ca_id}/{cid}"
    if attempt:
        cid = f"{cid}_{attempt}"
    return cid


def normalise_torch_compile_id(text) -> str | None:
    """Compile ids inside payloads use torch's str(CompileId): `!0` for a compiled-autograd graph
    without a frame, `None` for no context. Map them onto the envelope spelling."""
    if not isinstance(text, str) or not text or text == "None":
        return None
    if text[0] == "!" and "/" not in text:
        return f"{text}/-/-"
    return text


def without_attempt(compile_id: str | None) -> str | None:
    return None if compile_id is None else _ATTEMPT_SUFFIX.sub("", compile_id)


def is_library_file(path: str | None) -> bool:
    """Code of torch, an installed package or the standard library: where a frame's graph breaks and
    recompiles are no change to the user's model (2.14 compiles inspect.py under compiled autograd)."""
    return bool(path) and any(p in path for p in _LIBRARY_PARTS)


def frame_key(compile_id: str | None) -> str | None:
    """The frame part of a compile id (`6/1_2` -> `6`, `!0/7/0` -> `!0/7`): every compile of a frame
    compiles the same code object."""
    if compile_id is None:
        return None
    return without_attempt(compile_id).rpartition("/")[0] or compile_id


def innermost_user_frame(text: str) -> tuple[str | None, int | None]:
    """Last `File "...", line N` of a traceback that is not library code (torch, site-packages,
    the standard library); the last frame of any kind when every frame is library code."""
    last = None
    user = None
    for m in _FRAME.finditer(text):
        last = m
        path = m.group(1)
        if not any(p in path for p in _LIBRARY_PARTS):
            user = m
    m = user or last
    return (m.group(1), int(m.group(2))) if m else (None, None)


def compilation_rows(parsed: Parsed, record_kind: str, metrics: dict, compile_id: str | None) -> None:
    row = {"compile_id": compile_id, "record_kind": record_kind}
    for c in _STR_COLS:
        row[c] = _as_str(metrics.get(c))
    for c in _INT_COLS:
        row[c] = _as_int(metrics.get(c))
    for c in _FLOAT_COLS:
        row[c] = _as_float(metrics.get(c))
    for c in _BOOL_COLS:
        row[c] = _as_bool(metrics.get(c))
    restarts = metrics.get("restart_reasons")
    row["restart_reasons"] = [str(r) for r in restarts] if isinstance(restarts, list) else None
    for column, field in _CACHE_COUNTS.items():
        row[column] = _as_int(metrics.get(field))
    row["record"] = orjson.dumps({k: v for k, v in metrics.items() if k not in KEPT_ELSEWHERE}).decode()
    parsed.add("compilations", row)

    # the lazily compiled backward of a compile id reports the same phase names as its forward
    prefix = "bwd_" if record_kind.startswith("bwd_") else ""
    for field, name, factor in _PHASE_NAMES:
        v = metrics.get(field)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            parsed.add("timings", {
                "compile_id": compile_id, "graph_id": None, "kind": "compile", "name": prefix + name,
                "duration_us": float(v) * factor, "calls": 1, "source": "compilation_metrics",
            })

    cudagraph_skip_row(parsed, metrics, compile_id, "compilation_metrics")
    for reason in row["restart_reasons"] or ():
        parsed.add("compile_events", _event(compile_id, "restart", reason, None, None, row["co_filename"]))


def failure_event(record_kind: str, metrics: dict, compile_id: str | None) -> dict | None:
    """The failure a compilation_metrics record reports (fail_type), or None. `fallback`: the frame
    then ran eagerly (a soft failure, or any failure with errors suppressed); a lazily compiled
    backward that fails is no frame falling back."""
    fail_type = _as_str(metrics.get("fail_type"))
    if not fail_type:
        return None
    fail_reason = _as_str(metrics.get("fail_reason"))
    event = _event(compile_id, "failure", f"{fail_type}: {fail_reason}" if fail_reason else fail_type,
                   _as_str(metrics.get("fail_user_frame_filename")), _as_int(metrics.get("fail_user_frame_lineno")),
                   _as_str(metrics.get("co_filename")))
    event["fallback"] = record_kind == "compilation_metrics" and (
        fail_type.rsplit(".", 1)[-1] in _SOFT_FAILURES or metrics.get("config_suppress_errors") is True)
    return event


_CUDAGRAPH_SKIP_PREFIX = re.compile(r"^skipping cudagraphs? due to ")


def cudagraph_skip_row(parsed: Parsed, metrics: dict, compile_id: str | None, source: str) -> None:
    """A compile's `cudagraph_skip_reason` (2.7+), without its "skipping cudagraphs due to " lead."""
    reason = metrics.get("cudagraph_skip_reason")
    if isinstance(reason, str) and reason:
        parsed.add("cudagraph_events", {"compile_id": compile_id, "kind": "skip", "n": 1, "source": source,
                                        "reason": _CUDAGRAPH_SKIP_PREFIX.sub("", reason).strip()})


def _event(compile_id, kind, reason, user_file, user_line, frame_file=None) -> dict:
    """in_library: the compiled frame's code (else the event's user frame) is library code."""
    return {"compile_id": compile_id, "kind": kind, "reason": reason, "user_file": user_file,
            "user_line": user_line, "source": SOURCE, "in_library": is_library_file(frame_file or user_file)}


def graph_break_row(parsed: Parsed, compile_id: str | None, text: str, frame_file: str | None = None) -> None:
    """Reason = the message between the `Graph break in user code at F:L` line and the user
    traceback; Dynamo's own traceback that follows is dropped."""
    lines = text.split("\n")
    user_file = user_line = None
    m = _GRAPH_BREAK_AT.match(lines[0]) if lines else None
    if m:
        user_file, user_line = m.group(1), int(m.group(2))
        lines = lines[1:]
    end = len(lines)
    for i, line in enumerate(lines):
        if line.startswith(("User code traceback:", "Traceback (most recent call last):")):
            end = i
            break
    if user_file is None:
        user_file, user_line = innermost_user_frame("\n".join(lines[end:]))
    reason = "\n".join(lines[:end]).strip() or text.strip()
    parsed.add("compile_events", _event(compile_id, "graph_break", reason, user_file, user_line, frame_file))


def recompile_rows(parsed: Parsed, compile_id: str | None, text: str, frame_file: str | None = None) -> None:
    """One row per recompile: a `recompile_reasons` artifact lists the guard that failed on each
    cached entry of the frame, and all of them failing made one recompile. reason = those failures
    joined by newlines, details = each of them (raw). The payload is a JSON list, or (2.13+) plain
    text although its encoding says json, each reason starting with the id of the compile whose guard
    failed. user_file/user_line: the innermost frame of the first guard's user stack trace, when given."""
    reasons: list[str] = []
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        value = None
    if isinstance(value, list):
        reasons = [v if isinstance(v, str) else orjson.dumps(v).decode() for v in value]
    elif isinstance(value, str):
        reasons = [value]
    else:
        for line in text.split("\n"):
            if reasons and line and not _REASON_START.match(line):
                reasons[-1] += "\n" + line
            elif line.strip():
                reasons.append(line)
    reasons = [r.strip() for r in reasons if r.strip()]
    if not reasons:
        return
    # 2.14 appends the `User stack trace:` of the failed guard
    user_file, user_line = innermost_user_frame(reasons[0])
    event = _event(compile_id, "recompile", "\n".join(reasons), user_file, user_line, frame_file)
    event["details"] = reasons
    parsed.add("compile_events", event)


def dynamo_error_event(compile_id: str | None, text: str, frame_file: str | None = None) -> dict:
    """The failure a `dynamo_error` artifact reports. Reason = the exception of the last traceback
    of the (possibly chained) error, up to Dynamo's `from user code:` block or its `Set TORCH...`
    hints; user_file/user_line = the innermost user frame of that block, else of the whole text."""
    lines = text.rstrip("\n").split("\n")
    last_tb = max((i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")), default=-1)
    start = next((i for i in range(last_tb + 1, len(lines)) if lines[i] and not lines[i][0].isspace()), 0)
    end = next((i for i in range(start, len(lines)) if lines[i].startswith(_ERROR_TAIL)), len(lines))
    user_block = "\n".join(lines[end:]) if end < len(lines) and lines[end].startswith("from user code:") else text
    user_file, user_line = innermost_user_frame(user_block)
    reason = "\n".join(lines[start:end]).strip() or text.strip()
    event = _event(compile_id, "failure", reason, user_file, user_line, frame_file)
    event["fallback"] = reason.split(":", 1)[0].rsplit(".", 1)[-1] in _SOFT_FAILURES
    return event


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


def stack_trace_rows(parsed: Parsed, graph_id: str, stacks: dict) -> int:
    """One lineage row per (kernel, distinct innermost user frame) of
    `{"<kernel>:<debug handle>": [stack trace, ...]}`; a kernel without stacks gets one row
    with no frame. Returns the number of rows added."""
    added = 0
    known: dict[str, tuple] = {}  # kernels of one graph share most of their stacks
    for key, traces in stacks.items():
        name, _, handle = key.rpartition(":")
        if not name or not handle.isdigit():
            name, handle = key, None
        frames = []
        for trace in traces if isinstance(traces, list) else ():
            if isinstance(trace, str):
                frame = known.get(trace)
                if frame is None:
                    frame = known[trace] = innermost_user_frame(trace)
            else:
                frame = (None, None)
            if frame[0] is not None and frame not in frames:
                frames.append(frame)
        for user_file, user_line in frames or [(None, None)]:
            parsed.add("lineage", {
                "graph_id": graph_id, "source_node": None, "post_grad_node": None, "kernel_name": name,
                "debug_handle": int(handle) if handle is not None else None,
                "user_file": user_file, "user_line": user_line, "source": SOURCE,
            })
            added += 1
    return added


class ChromiumSpans:
    """Matches chromium B/E events per (name, pid, tid) stack and sums the completed spans per
    (compile id, name): one timings row each, duration_us = total, calls = number of spans.
    Memory is bounded by nesting depth plus distinct (compile id, name) pairs."""

    def __init__(self, counters, noted=None):
        self.counters = counters
        self.open: dict[tuple, list] = {}
        self.totals: dict[tuple, list] = {}
        # noted(event, compile id): told of events whose args are data (an autotuning span's end,
        # an automatic_dynamic instant), beyond their time
        self.noted = noted

    def add(self, event: dict, envelope_compile_id: str | None) -> None:
        ph = event.get("ph")
        name = event.get("name")
        ts = event.get("ts")
        if not isinstance(ts, (int, float)) or not isinstance(name, str):
            self.counters["chromium_event_unusable"] += 1
            return
        args = event.get("args")
        cid = normalise_torch_compile_id(args.get("compile_id")) if isinstance(args, dict) else None
        key = (name, event.get("pid"), event.get("tid"))
        if ph == "B":
            self.open.setdefault(key, []).append((ts, cid or envelope_compile_id))
        elif ph == "E":
            stack = self.open.get(key)
            if not stack:
                self.counters["chromium_end_without_begin"] += 1
                return
            begin_ts, begin_cid = stack.pop()
            self._total(begin_cid or cid or envelope_compile_id, name, ts - begin_ts)
            if self.noted is not None and name.endswith(AUTOTUNE_SPAN):
                self.noted(event, begin_cid or cid or envelope_compile_id)
        elif ph == "i" and self.noted is not None and name == "automatic_dynamic":
            self.noted(event, cid or envelope_compile_id)
        elif ph == "X" and isinstance(event.get("dur"), (int, float)):
            self._total(cid or envelope_compile_id, name, event["dur"])
        else:
            self.counters[f"chromium_ph:{ph}"] += 1

    def _total(self, compile_id, name, duration) -> None:
        t = self.totals.get((compile_id, name))
        if t is None:
            self.totals[(compile_id, name)] = [float(duration), 1]
        else:
            t[0] += duration
            t[1] += 1

    def finish(self, parsed: Parsed) -> None:
        unclosed = sum(len(s) for s in self.open.values())
        if unclosed:
            self.counters["chromium_begin_without_end"] += unclosed
        for (compile_id, name), (total, calls) in self.totals.items():
            parsed.add("timings", {
                "compile_id": compile_id, "graph_id": None, "kind": "compile", "name": name,
                "duration_us": total, "calls": calls, "source": "chromium_event",
            })


def cache_rows(parsed: Parsed, name: str, payload, compile_id: str | None, graph_id: str | None, line: int) -> None:
    """One cache_events row for a cache artifact (see CACHE_ARTIFACT)."""
    m = CACHE_ARTIFACT.match(name)
    info = payload if isinstance(payload, dict) else {}
    state = info.get("cache_state")
    outcome = state if isinstance(state, str) and state else (m.group(2) if m.group(2) in _OUTCOME_WORDS else None)
    if outcome is None and m.group(2) not in ("hash",):
        outcome = m.group(2)  # dynamo_cache_entries, ...: what the record says happened
    saved = info.get("time_saved_ns")
    saved_us = saved / 1e3 if isinstance(saved, (int, float)) and not isinstance(saved, bool) else None
    if saved_us is None and isinstance(info.get("time_saved_ms"), (int, float)):
        saved_us = info["time_saved_ms"] * 1e3
    reason = info.get("cache_bypass_reason")
    parsed.add("cache_events", {
        "compile_id": compile_id, "graph_id": graph_id if m.group(1) in ("fx_graph", "fx_graph_bundled") else None,
        "cache": _CACHE_NAMES[m.group(1)], "outcome": outcome, "reason": _as_str(reason),
        "cache_key": _as_str(info.get("key")), "location": None, "kernel_name": None, "time_saved_us": saved_us,
        "source": "artifact", "line": line,
    })


def kernel_autotune_rows(parsed: Parsed, payload, compile_id: str | None, graph_id: str | None, line: int) -> None:
    """`triton_kernel_info` (2.8+): each kernel's autotune cache state (hit, miss, only 1 config,
    force_disabled): one cache_events row each; and its Triton facts: number of configs, compile
    time, and the config that runs where the record knows it (`best_config` on a cache hit,
    `only_config`: lists of [name, value] pairs)."""
    if not isinstance(payload, dict):
        return
    for kernel, info in payload.items():
        if not isinstance(info, dict):
            continue
        state = info.get("autotune_cache_state")
        if isinstance(state, str):
            parsed.add("cache_events", {
                "compile_id": compile_id, "graph_id": graph_id, "cache": "autotune", "outcome": state,
                "reason": None, "cache_key": None, "location": None, "kernel_name": str(kernel),
                "time_saved_us": None, "source": "artifact", "line": line,
            })
        config = _config_pairs(info.get("best_config") or info.get("only_config"))
        parsed.add("triton_kernels", {
            "compile_id": compile_id, "kernel_name": str(kernel), "source": SOURCE, "cache_key": None,
            "num_warps": _as_int(config.get("num_warps")) if config else None,
            "num_stages": _as_int(config.get("num_stages")) if config else None,
            "num_ctas": _as_int(config.get("num_ctas")) if config else None,
            "maxnreg": _as_int(config.get("maxnreg")) if config else None,
            "shared_bytes": None, "target": None, "triton_version": None,
            "config": ", ".join(f"{k}={v}" for k, v in config.items()) if config else None,
            "chosen": True if config else None, "autotune_state": state if isinstance(state, str) else None,
            "num_configs": _as_int(info.get("num_configs")) if "num_configs" in info
            else (1 if state == "only 1 config" else None),
            "compile_time_us": _as_float(info.get("compile_time_us")),
            "n_regs": None, "n_spills": None, "metadata": info,
        })


def _config_pairs(value) -> dict | None:
    """A Triton config as Inductor hashes it for its caches: [[name, value], ...]."""
    if not isinstance(value, list):
        return None
    pairs = {}
    for item in value:
        if isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str):
            pairs[item[0]] = item[1]
    return pairs or None


# ---- dynamic shapes ---------------------------------------------------------------------------

SHAPE_KINDS = {"create_symbol": "symbol", "create_unbacked_symbol": "unbacked_symbol",
               "symbolic_shape_specialization": "specialization", "guard_added_fast": "guard", "guard_added": "guard"}


def shape_row(parsed: Parsed, kind: str, meta, compile_id: str | None, strings: dict, line: int) -> None:
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
        "compile_id": compile_id, "kind": SHAPE_KINDS[kind], "symbol": _as_str(meta.get("symbol")),
        "source": _as_str(source), "value": _as_str(value), "expr": _as_str(expr), "reason": _as_str(meta.get("reason")),
        "user_file": user_file, "user_line": user_line, "user_code": user_code, "line": line,
    })


def automatic_dynamic_row(parsed: Parsed, args: dict, compile_id: str | None, line: int) -> None:
    """Chromium `automatic_dynamic` instant: a dimension of an input made dynamic after it changed."""
    parsed.add("shape_events", {
        "compile_id": compile_id, "kind": "automatic_dynamic", "symbol": None, "source": _as_str(args.get("name")),
        "value": _as_str(args.get("new")), "expr": f"dim {args.get('dim_changed')}, was {args.get('cached')}",
        "reason": _as_str(args.get("reason")), "user_file": None, "user_line": None, "user_code": None, "line": line,
    })


def user_frame(stack, strings: dict) -> tuple[str | None, int | None, str | None]:
    """The innermost frame of a user stack that is not library code (file names are indices into
    the log's `str` records), else its innermost frame."""
    if not isinstance(stack, list) or not stack:
        return None, None, None
    frames = [f for f in stack if isinstance(f, dict)]
    named = [(strings.get(f.get("filename"), f.get("filename")), f) for f in frames]
    user = [(name, f) for name, f in named if isinstance(name, str) and not any(p in name for p in _LIBRARY_PARTS)]
    if not (user or named):
        return None, None, None
    name, frame = (user or named)[-1]
    return _as_str(name), _as_int(frame.get("line")), _as_str(frame.get("loc"))


# ---- autotuning -------------------------------------------------------------------------------

AUTOTUNE_SPAN = "_template_autotuning"


def autotune_winner_row(parsed: Parsed, name: str, args: dict, compile_id: str | None, seq: int, line: int) -> None:
    """The end of an `<op>_template_autotuning` span: the winner of that op's autotuning, from its
    `autotune_choices_stats` (2.9+; earlier spans say which op and shapes, not who won)."""
    stats = args.get("autotune_choices_stats")
    if isinstance(stats, str):
        try:
            stats = orjson.loads(stats)
        except orjson.JSONDecodeError:
            stats = None
    stats = stats if isinstance(stats, dict) else {}
    best_time = stats.get("best_time")
    parsed.add("autotune_choices", {
        "compile_id": compile_id, "seq": seq, "op": name[: -len(AUTOTUNE_SPAN)],
        "shapes": _as_str(args.get("autotune_shape")), "strides": _as_str(args.get("autotune_strides")),
        "dtypes": _as_str(args.get("autotune_dtypes")), "num_choices": _as_int(stats.get("num_choices")),
        "rank": 1 if stats.get("best_kernel") else None, "choice": _as_str(stats.get("best_kernel")),
        "config": _as_str(stats.get("best_kernel_desc")) or ("" if stats.get("best_kernel") else None),
        "time_ms": _as_float(best_time), "pct": 100.0 if stats.get("best_kernel") else None,
        "winner": True if stats.get("best_kernel") else None, "source": SOURCE, "line": line,
    })
