"""Readers of a compile's metrics (`compilation_metrics`, its backward's and its runtime's) and of
`torch_version`: compilations, their timings, restarts, failures and cudagraph skips, and run facts.

compilations, timings, restarts and failures take compilation_metrics' own `compile_id`, which names
the frame compile without the attempt (`0/0`); the envelope's id when the record has none (older
torch). An id that differs by more than the attempt is a warning.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from inductor_warehouse.ingest.parsers import fx_graph_runnable
from inductor_warehouse.ingest.parsers.cache_settings import OFF, from_config, note
from inductor_warehouse.ingest.parsers.compile_ids import frame_key, without_attempt
from inductor_warehouse.ingest.parsers.trace_breaks import RESTART, read_restarts
from inductor_warehouse.ingest.parsers.trace_caches import count_cache_lookups, settle_lookups
from inductor_warehouse.ingest.parsers.trace_events import Compiles, event, failure_event, store_failure
from inductor_warehouse.ingest.parsers.trace_log import TraceLog
from inductor_warehouse.ingest.parsers.trace_values import as_bool, as_float, as_int, as_str
from inductor_warehouse.ingest.rows import CompilationRow, Json, Parsed

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
# inductor_provenance_tracking_kernel_stack_traces artifacts again (lineage), and most of a record's bytes
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
# timers nested in AOTAutograd's, outermost first (the cumulative ones of 2.6+, the seconds of 2.3-2.5):
# one a record carries as null under a timer that ran did not run (a cache hit skipped it)
_NESTED_TIMERS = (("aot_autograd_cumulative_compile_time_us", "inductor_cumulative_compile_time_us",
                   "inductor_code_gen_cumulative_compile_time_us"),
                  ("backend_compile_time_s", "inductor_compile_time_s", "code_gen_time_s"))
_CUDAGRAPH_SKIP_PREFIX = re.compile(r"^skipping cudagraphs? due to ")
_RUN_FACTS = (("compiler_version", "pytorch_version"), ("python_version", "python_version"),
              ("triton_version", "triton_version"), ("cuda_version", "cuda_version"))


# what Inductor times whenever it compiles a graph, a cache hit's too (compile_fx_inner's timer)
_INDUCTOR_TIMERS = ("inductor_compile_time_s", "inductor_cumulative_compile_time_us", "code_gen_time_s",
                    "inductor_code_gen_cumulative_compile_time_us")


def read_metrics(compiles: Compiles, lineno: int, metrics: Json, cid: str | None, data: bytes,
                 record_kind: str = "compilation_metrics") -> None:
    parsed = compiles.log.parsed
    if not isinstance(metrics, dict):
        parsed.problem(f"{record_kind} metadata is not an object", lineno, "error")
        return
    own = metrics.get("compile_id")
    compile_id = own if isinstance(own, str) and own else cid
    if cid is not None and compile_id != cid and compile_id != without_attempt(cid):
        parsed.problem(f"{record_kind} compile_id {compile_id} disagrees with the envelope's {cid}", lineno, "warning")
    if isinstance(metrics.get("co_filename"), str):
        compiles.frame_files.setdefault(frame_key(compile_id), metrics["co_filename"])
    compilation_rows(parsed, record_kind, metrics, compile_id)
    if record_kind == "compilation_metrics":
        frame_file = as_str(metrics.get("co_filename"))
        for kind, reason in read_restarts(compiles.restarts, metrics, compile_id):
            parsed.add("compile_events", event(compile_id, kind, reason, None, None, frame_file))
        # a restart is an attempt (the envelope's `_N`): Dynamo drops a failed compile's reasons and
        # keeps a set, so the attempts it gave no reason for are restarts of no reason
        named = len(parsed.rows["compilations"][-1]["restart_reasons"] or ())
        for _ in range(compiles.restarts.attempts.get(without_attempt(compile_id) or "", 0) - named):
            parsed.add("compile_events", event(compile_id, RESTART, None, None, None, frame_file))
    store_failure(compiles, failure_event(record_kind, metrics, compile_id,
                                          without_attempt(compile_id) in compiles.skipped))
    if (record_kind == "compilation_metrics" and metrics.get("backend_compile_time_s") is not None
            and metrics.get("fail_type") is None):
        # Dynamo handed the compile's graph to its backend: Inductor's own timers say whether that was Inductor
        compiles.backend_graphs[without_attempt(compile_id)] = any(
            metrics.get(k) is not None for k in _INDUCTOR_TIMERS)
    compiles.finished.add(without_attempt(compile_id))
    settle_lookups(compiles.caches, compile_id, ended=True)
    count_cache_lookups(compiles.caches, compile_id, parsed.rows["compilations"][-1])
    facts = parsed.facts
    if record_kind == "compilation_metrics" and compiles.epoch is None:
        start = metrics.get("start_time")
        if isinstance(start, (int, float)) and not isinstance(start, bool) and start > 0:
            compiles.epoch = float(start)
    for fact, field in _RUN_FACTS:
        v = metrics.get(field)
        if isinstance(v, str) and v and fact not in facts:
            facts[fact] = v
    _note_caches(facts, metrics)


def read_bwd_metrics(compiles: Compiles, lineno: int, metrics: Json, cid: str | None, data: bytes) -> None:
    read_metrics(compiles, lineno, metrics, cid, data, "bwd_compilation_metrics")


def read_runtime_metrics(log: TraceLog, lineno: int, metrics: Json, cid: str | None, data: bytes) -> None:
    # runtime work of a compiled graph (cudagraphify, autotuning at run time): only a cudagraph
    # skip is kept; the compile's own metrics hold the rest
    if isinstance(metrics, dict):
        own = metrics.get("compile_id")
        cudagraph_skip_row(log.parsed, metrics, own if isinstance(own, str) and own else cid, "compilation_metrics")


def read_torch_version(log: TraceLog, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    value = log.json(data, lineno, "torch_version")
    if isinstance(value, dict):
        facts = log.parsed.facts
        if isinstance(value.get("pytorch_version"), str):
            facts["compiler_version"] = value["pytorch_version"]
        if isinstance(value.get("commit"), str):
            facts["compiler_commit"] = value["commit"]


def read_runnable(log: TraceLog, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    """The repro script's env and config lines, which come before its `class Repro`: what they say
    of the caches; the graph's code below them, most of its bytes, is left unread."""
    facts = log.parsed.facts
    if facts.get("caches_said", ("",))[0] == OFF:
        return
    end = data.find(b"\nclass ")
    head = data if end < 0 else data[:end]
    note(facts, fx_graph_runnable.caches_said(head.decode("utf-8", "replace"), "trace fx_graph_runnable"))


def compilation_rows(parsed: Parsed, record_kind: str, metrics: dict[str, Json], compile_id: str | None) -> None:
    row: CompilationRow = {"compile_id": compile_id, "record_kind": record_kind}
    for c in _STR_COLS:
        row[c] = as_str(metrics.get(c))  # type: ignore[literal-required]
    for c in _INT_COLS:
        row[c] = as_int(metrics.get(c))  # type: ignore[literal-required]
    for c in _FLOAT_COLS:
        row[c] = as_float(metrics.get(c))  # type: ignore[literal-required]
    for c in _BOOL_COLS:
        row[c] = as_bool(metrics.get(c))  # type: ignore[literal-required]
    restarts = metrics.get("restart_reasons")
    row["restart_reasons"] = [str(r) for r in restarts] if isinstance(restarts, list) else None
    for column, field in _CACHE_COUNTS.items():
        row[column] = as_int(metrics.get(field))  # type: ignore[literal-required]
    row["record"] = orjson.dumps({k: v for k, v in metrics.items() if k not in KEPT_ELSEWHERE}).decode()
    parsed.add("compilations", row)

    # the lazily compiled backward of a compile id reports the same phase names as its forward
    prefix = "bwd_" if record_kind.startswith("bwd_") else ""
    skipped = _skipped_timers(metrics)
    for field, name, factor in _PHASE_NAMES:
        v = 0 if field in skipped else metrics.get(field)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            parsed.add("timings", {
                "compile_id": compile_id, "graph_id": None, "kind": "compile", "name": prefix + name,
                "duration_us": float(v) * factor, "calls": 1, "source": "compilation_metrics",
            })

    cudagraph_skip_row(parsed, metrics, compile_id, "compilation_metrics")
    for reason in row["restart_reasons"] or ():
        parsed.add("compile_events", event(compile_id, "restart", reason, None, None, row["co_filename"]))


def _note_caches(facts: dict[str, Any], metrics: dict[str, Json]) -> None:
    """What the compile's Inductor config and torch.compiler config say of the caches."""
    if facts.get("caches_said", ("",))[0] != OFF:  # once a compile says off, no later one unsays it
        for field in ("inductor_config", "compiler_config"):
            note(facts, from_config(_json_object(metrics.get(field)), f"trace compilation_metrics {field}"))


def _json_object(value: Json) -> Json:
    """A config torch writes as JSON text (or, in a hand-made record, as the object itself)."""
    if isinstance(value, str):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value


def _skipped_timers(metrics: dict[str, Json]) -> set[str]:
    """The timers of a compile that finished (no fail_type) that its record carries as null inside
    a timer that ran: AOTAutograd's cache hit skips Inductor, the FX graph cache's its code gen."""
    skipped: set[str] = set()
    if metrics.get("fail_type") is not None:
        return skipped
    for chain in _NESTED_TIMERS:
        for outer, inner in zip(chain, chain[1:], strict=False):
            ran = outer in skipped or isinstance(metrics.get(outer), (int, float))
            if ran and inner in metrics and metrics[inner] is None:
                skipped.add(inner)
    return skipped


def cudagraph_skip_row(parsed: Parsed, metrics: dict[str, Json], compile_id: str | None, source: str) -> None:
    """A compile's `cudagraph_skip_reason` (2.7+), without its "skipping cudagraphs due to " lead."""
    reason = metrics.get("cudagraph_skip_reason")
    if isinstance(reason, str) and reason:
        parsed.add("cudagraph_events", {"compile_id": compile_id, "kind": "skip", "n": 1, "source": source,
                                        "reason": _CUDAGRAPH_SKIP_PREFIX.sub("", reason).strip()})
