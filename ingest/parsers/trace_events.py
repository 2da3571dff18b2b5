"""Readers of what happened to a compile: `dynamo_start`, graph breaks, recompiles and failures (compile_events).

A graph-break record is a graph break as Dynamo counts it, a break Dynamo files elsewhere, or the
record of a frame that fell back to eager, whose failure the compile's metrics report
(compile_causes.break_kind).

A failed compile is reported twice: a `dynamo_error` artifact, then the compile's metrics
(fail_type). One failure is stored: the metrics', which every release writes; an error waits (by
compile id without attempt) for them, and stands alone when none come.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import orjson

from inductor_warehouse.ingest.parsers.compile_ids import frame_key, without_attempt
from inductor_warehouse.ingest.parsers.trace_breaks import Restarts
from inductor_warehouse.ingest.parsers.trace_caches import Caches
from inductor_warehouse.ingest.parsers.trace_log import TraceLog
from inductor_warehouse.ingest.parsers.trace_values import as_int, as_str
from inductor_warehouse.ingest.parsers.compile_causes import SKIPPED, break_kind, cause_of, origin
from inductor_warehouse.ingest.parsers.user_code import innermost_user_frame
from inductor_warehouse.ingest.rows import CompileEventRow, Json, Parsed

SOURCE = "torch_trace"
_GRAPH_BREAK_AT = re.compile(r"^Graph break in user code at (.+):(\d+)\s*$")
# a recompile reason starts with the id of the compile whose guards failed: `0/0: ...`, `!0/7/0: ...`
_REASON_START = re.compile(r"^!?[\d-]+(?:/[\d-]+)+(?:_\d+)?: ")
_ERROR_TAIL = ("from user code:", "Set TORCH")
# exceptions Dynamo treats as soft failures (convert_frame's `soft_fail`), whose frame then runs
# eagerly; any other failure falls back to eager only when errors are suppressed
# recompile and cache limits, by every release's wording (cache_size_limit, recompile_limit, "Dynamo recompile limit exceeded")
_LIMIT = re.compile(r"cache_size_limit|recompile_limit|(?:recompile|cache) limit", re.I)
_RELEASE = re.compile(r"(\d+)\.(\d+)")
_SOFT_FAILURES = frozenset({"Unsupported", "UserError", "CacheLimitExceeded", "RecompileLimitExceeded"})


@dataclass
class Compiles:
    """What the readers of compiles keep (this module's and trace_metrics'): which frames started and
    finished, the file each frame compiles, failures reported and errors waiting for theirs, the
    first compile's start time; with the `str` records (trace_shapes.Shapes') that name files, and
    the caches' lookup counts (trace_caches.Caches), which a compile's metrics add to."""
    log: TraceLog
    strings: dict[int, str]
    caches: Caches
    started: set[str | None] = field(default_factory=set)  # frame compile ids a dynamo_start opened
    finished: set[str | None] = field(default_factory=set)  # and those a compilation_metrics closed
    guarded: set[str | None] = field(default_factory=set)  # and those whose guards were logged (built at the end)
    # frame (compile id less its last part) -> the file of the code it compiles, from dynamo_start
    # or compilation_metrics: where a frame's events happened
    frame_files: dict[str | None, str] = field(default_factory=dict)
    pending_errors: dict[str | None, CompileEventRow] = field(default_factory=dict)  # dynamo_errors waiting for metrics
    failed_compiles: set[str | None] = field(default_factory=set)
    skipped: set[str | None] = field(default_factory=set)  # compiles whose break record says the frame ran eagerly
    epoch: float | None = None  # the first compilation_metrics' start time: the year of the glog prefix
    restarts: Restarts = field(default_factory=Restarts)  # graph breaks of releases without break records
    # compile id -> whether its metrics show Inductor's time, for the compiles whose graph went to a backend
    backend_graphs: dict[str | None, bool] = field(default_factory=dict)


def read_dynamo_start(compiles: Compiles, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    """The file of the code a frame compiles (written before a compile's events), for where its events
    happened: the innermost frame of the stack outside torch's own code, so that a compiled module's
    frame (torch's `inner` wrapper, nn.Module's call) is the code that called it."""
    compiles.started.add(without_attempt(cid))
    stack = meta.get("stack") if isinstance(meta, dict) else None
    if not isinstance(stack, list):
        return
    names: list[str] = []
    for frame in stack:
        name = frame.get("filename") if isinstance(frame, dict) else None
        name = compiles.strings.get(name) if isinstance(name, int) else name
        if isinstance(name, str):
            names.append(name)
    if names:
        compiles.frame_files[frame_key(cid)] = next((n for n in reversed(names) if origin(n) != "torch"), names[-1])


def read_graph_break(compiles: Compiles, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    compiles.restarts.recorded.add(without_attempt(cid) or "")
    if not graph_break_row(compiles.log.parsed, cid, data.decode("utf-8", "replace"), compiles.frame_files.get(frame_key(cid))):
        compiles.skipped.add(without_attempt(cid))


def read_recompile(compiles: Compiles, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    recompile_rows(compiles.log.parsed, cid, data.decode("utf-8", "replace"), compiles.frame_files.get(frame_key(cid)))


def read_dynamo_error(compiles: Compiles, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    error = dynamo_error_event(cid, data.decode("utf-8", "replace"), compiles.frame_files.get(frame_key(cid)))
    key = without_attempt(cid)
    if key in compiles.failed_compiles or key in compiles.pending_errors:
        compiles.log.parsed.counters["dynamo_error_of_a_reported_failure"] += 1
    else:
        compiles.pending_errors[key] = error


def store_failure(compiles: Compiles, failure: CompileEventRow | None) -> None:
    """A compile's metrics reported a failure (or none): store it once, with the frame its
    dynamo_error named when the metrics name none."""
    if failure is None:
        return
    key = without_attempt(failure["compile_id"])
    error = compiles.pending_errors.pop(key, None)
    if error is not None:
        compiles.log.parsed.counters["dynamo_error_of_a_reported_failure"] += 1
        if failure["user_file"] is None:
            failure["user_file"], failure["user_line"] = error["user_file"], error["user_line"]
    compiles.failed_compiles.add(key)
    compiles.log.parsed.add("compile_events", failure)


def event(compile_id: str | None, kind: str, reason: str | None, user_file: str | None, user_line: int | None,
          frame_file: str | None = None) -> CompileEventRow:
    """origin: where it happened: a recompile's or restart's in the compiled frame's code, a break's
    or failure's at its user frame (each falling back on the other); cause: compile_causes.cause_of."""
    where = (frame_file or user_file) if kind in ("recompile", "restart") else (user_file or frame_file)
    cause_id, cause_title = cause_of(kind, reason)
    return {"compile_id": compile_id, "kind": kind, "reason": reason, "user_file": user_file,
            "user_line": user_line, "source": SOURCE, "origin": origin(where),
            "cause_id": cause_id, "cause_title": cause_title}


def failure_event(record_kind: str, metrics: dict[str, Json], compile_id: str | None,
                  skip_logged: bool = False) -> CompileEventRow | None:
    """The failure a compilation_metrics record reports (fail_type), or None. `fallback`: the frame
    then ran eagerly (a soft failure, or any failure with errors suppressed); a lazily compiled
    backward that fails is no frame falling back. Whether errors were suppressed is written from
    2.6 on (`config_suppress_errors`); before, a hard failure's fallback is unknown (NULL).
    A soft failure under `fullgraph=True` or `error_on_graph_break(True)` is raised to the caller,
    which the record does not say; from 2.11 the root tracer writes a `Failed to handle graph break
    gracefully. Skipping the function and falling back to eager` break record before every soft
    fallback (`skip_logged`), and only then, so there a soft failure without one ran nothing eagerly."""
    fail_type = as_str(metrics.get("fail_type"))
    if not fail_type:
        return None
    fail_reason = as_str(metrics.get("fail_reason"))
    failure = event(compile_id, "failure", f"{fail_type}: {fail_reason}" if fail_reason else fail_type,
                    as_str(metrics.get("fail_user_frame_filename")), as_int(metrics.get("fail_user_frame_lineno")),
                    as_str(metrics.get("co_filename")))
    fell_back = _fell_back(fail_type, metrics)
    if fell_back and not skip_logged and _is_soft_break(fail_type, fail_reason) and _writes_skip_records(metrics):
        fell_back = False
    failure["fallback"] = record_kind == "compilation_metrics" and fell_back
    return failure


def _is_soft_break(fail_type: str, reason: str | None) -> bool:
    """A graph break the tracer could not handle (the kind fullgraph raises), not a recompile limit,
    which Dynamo reports from convert_frame with no break record (under fullgraph it is a hard
    FailOnRecompileLimitHit instead)."""
    return fail_type.rsplit(".", 1)[-1] in ("Unsupported", "UserError") and not _LIMIT.search(reason or "")


def _writes_skip_records(metrics: dict[str, Json]) -> bool:
    m = _RELEASE.match(as_str(metrics.get("pytorch_version")) or "")
    return m is not None and (int(m[1]), int(m[2])) >= (2, 11)


def _fell_back(fail_type: str, metrics: dict[str, Json]) -> bool | None:
    """convert_frame re-raises a failure that is not a soft one unless `config.suppress_errors`:
    None where the record does not say that flag."""
    if fail_type.rsplit(".", 1)[-1] in _SOFT_FAILURES:
        return True
    suppressed = metrics.get("config_suppress_errors")
    return suppressed if isinstance(suppressed, bool) else None


def graph_break_row(parsed: Parsed, compile_id: str | None, text: str, frame_file: str | None = None) -> bool:
    """Reason = the message between the `Graph break in user code at F:L` line and the user
    traceback; Dynamo's own traceback that follows is dropped. Kind: compile_causes.break_kind; the
    record of a frame that fell back to eager is no row (its failure is): False for it, else True."""
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
    kind = break_kind(reason)
    if kind is SKIPPED:
        parsed.counters["graph_break_of_a_skipped_frame"] += 1  # its frame's failure is the metrics'
        return False
    parsed.add("compile_events", event(compile_id, kind, reason, user_file, user_line, frame_file))
    return True


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
    recompile = event(compile_id, "recompile", "\n".join(reasons), user_file, user_line, frame_file)
    recompile["details"] = reasons
    parsed.add("compile_events", recompile)


def dynamo_error_event(compile_id: str | None, text: str, frame_file: str | None = None) -> CompileEventRow:
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
    failure = event(compile_id, "failure", reason, user_file, user_line, frame_file)
    failure["fallback"] = _fell_back(reason.split(":", 1)[0], {})  # the metrics that say the flag never came
    return failure
