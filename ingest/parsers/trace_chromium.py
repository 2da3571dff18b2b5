"""Readers of `chromium_event` records: dynamo_timed spans summed into timings, and the events whose
args are data: autotuning winners (autotune_choices), automatic_dynamic (shape_events) and
recorded cudagraphs (cudagraph_events).

A span's compile id is the `compile_id` in the event's args (torch's spelling, `!0` -> `!0/-/-`),
else the envelope's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TypeAlias, cast

import orjson

from inductor_warehouse.ingest.parsers.compile_ids import normalise_torch_compile_id
from inductor_warehouse.ingest.parsers.trace_log import TraceLog
from inductor_warehouse.ingest.parsers.trace_values import as_float, as_int, as_str
from inductor_warehouse.ingest.rows import Json, Parsed

SOURCE = "torch_trace"
AUTOTUNE_SPAN = "_template_autotuning"
CUDAGRAPH_RECORD_SPAN = "CUDAGraphNode.record"  # one span per cudagraph recorded (dynamo_timed)

Event: TypeAlias = dict[str, Json]  # a chromium event, as the payload's JSON gives it
_Thread: TypeAlias = tuple[Json, Json]  # (pid, tid), as the event gives them
_Named: TypeAlias = tuple[str | None, str]  # (compile id, span name)


class Spans:
    """What the chromium_event reader keeps: the spans open and summed, and the autotuning spans seen
    (each op's place in the run)."""

    def __init__(self, log: TraceLog):
        self.log = log
        self.autotuned = 0
        self.spans = ChromiumSpans(log.parsed.counters, noted=self.data)

    def data(self, chromium_event: Event, cid: str | None) -> None:
        """An event whose args are data: an autotuning span's end, or an automatic_dynamic instant."""
        args = chromium_event.get("args")
        if not isinstance(args, dict):
            args = {}
        if chromium_event.get("name") == "automatic_dynamic":
            automatic_dynamic_row(self.log.parsed, args, cid, self.log.lineno)
        else:
            self.autotuned += 1
            autotune_winner_row(self.log.parsed, chromium_event["name"], args, cid, self.autotuned, self.log.lineno)


def read_chromium(spans: Spans, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    try:
        chromium_event = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        spans.log.parsed.problem(f"chromium_event payload is not JSON: {e}", lineno, "error")
        return
    if isinstance(chromium_event, dict):
        spans.spans.add(chromium_event, cid)
    else:
        spans.log.parsed.counters["chromium_event_unusable"] += 1


def finish_chromium(spans: Spans) -> None:
    """The spans' timings, and a cudagraph_events row for each compile's recorded cudagraphs."""
    parsed = spans.log.parsed
    spans.spans.finish(parsed)
    for t in parsed.rows.get("timings", ()):
        if t["name"] == CUDAGRAPH_RECORD_SPAN and t["source"] == "chromium_event":
            parsed.add("cudagraph_events", {"compile_id": t["compile_id"], "kind": "record", "reason": None,
                                            "n": t["calls"], "source": "chromium_event"})


class ChromiumSpans:
    """Matches chromium B/E events per (name, pid, tid) stack and sums the completed spans per
    (compile id, name): one timings row each, duration_us = total, calls = number of spans, parent =
    the span that was open around its first one in the same thread (spans nest: inductor_compile
    holds code_gen). Memory is bounded by nesting depth plus distinct (compile id, name) pairs."""

    def __init__(self, counters: Counter[str], noted: Callable[[Event, str | None], None] | None = None):
        self.counters = counters
        # (name, pid, tid) -> its open spans' (begin ts, compile id, parent), innermost last
        self.open: dict[tuple[str, Json, Json], list[tuple[float, str | None, str | None]]] = {}
        self.threads: dict[_Thread, list[str]] = {}  # (pid, tid) -> the names of its open spans, outermost first
        self.parents: dict[_Named, str | None] = {}  # (compile id, name) -> its first span's parent
        self.totals: dict[_Named, list[float]] = {}  # (compile id, name) -> [total duration, spans]
        # noted(event, compile id): told of events whose args are data (an autotuning span's end,
        # an automatic_dynamic instant), beyond their time
        self.noted = noted

    def add(self, event: Event, envelope_compile_id: str | None) -> None:
        ph = event.get("ph")
        name = event.get("name")
        ts = event.get("ts")
        if not isinstance(ts, (int, float)) or not isinstance(name, str):
            self.counters["chromium_event_unusable"] += 1
            return
        args = event.get("args")
        cid = normalise_torch_compile_id(args.get("compile_id")) if isinstance(args, dict) else None
        thread = (event.get("pid"), event.get("tid"))
        key = (name, *thread)
        # a pid or tid that is no JSON scalar is no dict key: the event is unusable (a try costs
        # nothing until it fails; a check would cost every event)
        if ph == "B":
            try:
                names = self.threads.setdefault(thread, [])
            except TypeError:
                self.counters["chromium_event_unusable"] += 1
                return
            self.open.setdefault(key, []).append((ts, cid or envelope_compile_id, names[-1] if names else None))
            names.append(name)
        elif ph == "E":
            try:
                stack = self.open.get(key)
            except TypeError:
                self.counters["chromium_event_unusable"] += 1
                return
            if not stack:
                self.counters["chromium_end_without_begin"] += 1
                return
            begin_ts, begin_cid, parent = stack.pop()
            names = self.threads.get(thread)  # type: ignore[assignment]
            if names and name in names:
                del names[len(names) - 1 - names[::-1].index(name)]
            self._total(begin_cid or cid or envelope_compile_id, name, ts - begin_ts, parent)
            if self.noted is not None and name.endswith(AUTOTUNE_SPAN):
                self.noted(event, begin_cid or cid or envelope_compile_id)
        elif ph == "i" and self.noted is not None and name == "automatic_dynamic":
            self.noted(event, cid or envelope_compile_id)
        elif ph == "X" and isinstance(event.get("dur"), (int, float)):
            try:
                names = self.threads.get(thread)  # type: ignore[assignment]
            except TypeError:
                self.counters["chromium_event_unusable"] += 1
                return
            self._total(cid or envelope_compile_id, name, event["dur"], names[-1] if names else None)
        else:
            self.counters[f"chromium_ph:{ph}"] += 1

    def _total(self, compile_id: str | None, name: str, duration: float, parent: str | None) -> None:
        t = self.totals.get((compile_id, name))
        if t is None:
            self.totals[(compile_id, name)] = [float(duration), 1]
            self.parents[(compile_id, name)] = parent
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
                # the spans counted: an int, in a list beside a float total
                "duration_us": total, "calls": cast(int, calls), "source": "chromium_event",
                "parent": self.parents.get((compile_id, name)),
            })


def automatic_dynamic_row(parsed: Parsed, args: dict[str, Json], compile_id: str | None, line: int) -> None:
    """Chromium `automatic_dynamic` instant: a dimension of an input made dynamic after it changed."""
    parsed.add("shape_events", {
        "compile_id": compile_id, "kind": "automatic_dynamic", "symbol": None, "source": as_str(args.get("name")),
        "value": as_str(args.get("new")), "expr": f"dim {args.get('dim_changed')}, was {args.get('cached')}",
        "reason": as_str(args.get("reason")), "user_file": None, "user_line": None, "user_code": None, "line": line,
    })


def autotune_winner_row(parsed: Parsed, name: str, args: dict[str, Json], compile_id: str | None, seq: int, line: int) -> None:
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
        "shapes": as_str(args.get("autotune_shape")), "strides": as_str(args.get("autotune_strides")),
        "dtypes": as_str(args.get("autotune_dtypes")), "num_choices": as_int(stats.get("num_choices")),
        "rank": 1 if stats.get("best_kernel") else None, "choice": as_str(stats.get("best_kernel")),
        "config": as_str(stats.get("best_kernel_desc")) or ("" if stats.get("best_kernel") else None),
        "time_ms": as_float(best_time), "pct": 100.0 if stats.get("best_kernel") else None,
        "winner": True if stats.get("best_kernel") else None, "source": SOURCE, "line": line,
    })
