"""TORCH_LOGS text (stderr of a run with TORCH_LOGS="graph_breaks,recompiles,fusion,cudagraphs").

Every glog line of a logged message repeats the full prefix, e.g.

    V1122 00:02:09.264000 4187 torch/_inductor/scheduler.py:1388] [0/0] [__fusion] cannot fuse op1 with op3: no shared data

so a multi-line message (graph break, recompile) is the run of consecutive lines that share
one prefix. A prefix need not start its line: output written without a newline (a progress bar)
may come before it. Torch 2.0/2.1 wrote `[2023-04-13 21:42:57,808] [0/0] torch._dynamo.x.__recompiles:
[DEBUG] <message>`: read alike, the artifact told by the logger name's `__<artifact>`. Lines of
other loggers and plain stderr (warnings, autotune tables) are skipped with a substring test
before any regex runs: the fusion logger alone writes ~100k lines a run. Lines of the loggers we
read that give nothing (a prefix not understood; no message of a file understood) are warnings.

Rows:
- fusion_decisions: `cannot fuse A with B: reason` -> refused; `fusing A with B` -> fused (the
  scheduler prints it when it fuses). A preceding `can fuse (benchmark): ... cause 1.2x speedup`
  (benchmark_fusion) becomes the fused row's reason; other fused rows have reason None.
  `cannot fuse (benchmark): fusing OrderedSet(['buf2']) with OrderedSet(['buf3']) cause 1.3x
  slowdown` -> refused, the nodes named by the buffers they write.
- compile_events: `Graph break ... in user code at FILE:LINE` + `Graph Break Reason: ...`
  (older torch: `Reason: ...`) -> graph_break; `Recompiling function F in FILE:LINE` + its
  `- <guard failure>` lines -> recompile, reason = the failures joined by newlines. 2.2 to 2.5 log
  `Graph break: from user code at:`, the user stack (the break at its last frame), then the
  exception (`exc_info`): the reason is the message of its last line, `torch._dynamo.exc.Unsupported:
  <msg>` (symbolic_convert.py's break_graph_if_unsupported), the key Dynamo counts it under.
  A frame Dynamo skipped and ran eagerly (`Graph break: skip:`, 2.4 to 2.7; `Failed to handle graph
  break gracefully`, `... results in a skip.` later) is no break Dynamo counts (its Unsupported goes
  to counters["unimplemented"], convert_frame.py): a failure row with fallback, so a log of skips
  alone still shows its logger on, with 0 breaks.
- an `unknown_break` compile_event (trace_breaks.UNKNOWN_BREAK) per recompile, in a log of 2.5 or
  before, of a function that logged a break: those releases log a break once per user location a
  process (utils.py's graph_break_dup_warning_checker), but Dynamo counts it every time a compile
  of the frame breaks, so the recompile's break went unlogged and the log cannot tell the count
  (views/15_run_rollups_of.sql). Also unseen there, and left alone: a break at a place an earlier
  frame already broke at (a helper reached from two frames), and STORE_ATTR breaks (logged on
  Dynamo's own logger, not graph_breaks).
- cudagraph_events: `skipping cudagraphs due to <reason>` -> skip; `Re-recording function=...` ->
  rerecord (see _cudagraph_line).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from inductor_warehouse.ingest.parsers import glog
from inductor_warehouse.ingest.parsers.torch_logs_autotune import AUTOTUNE_STARTS, AutotuneTables, Candidates
from inductor_warehouse.ingest.parsers.compile_causes import SKIPPED, break_kind, cause_of, origin
from inductor_warehouse.ingest.parsers.trace_breaks import UNKNOWN_BREAK, UNKNOWN_UNCOUNTED
from inductor_warehouse.ingest.rows import CompileEventRow, Parsed

SOURCE = "torch_logs"

# Everything up to the logger tag: the glog prefix, then an optional `[compile id]` (0/0, 1/0_1, !0/7/0)
_COMPILE_ID = r"(?:\[(?P<compile_id>!?[\d/_]+)\] )?"
_PREFIX = re.compile("^" + glog.PREFIX + _COMPILE_ID + "$")
_PREFIX_INSIDE = re.compile(glog.PREFIX + _COMPILE_ID + "$")  # after other output on the same line
# torch 2.0/2.1: `[date] [compile id] torch.<module>.__<artifact>: [LEVEL] `; the date, where a copy kept it
_OLD_PREFIX = (r"(?:\[rank\d+\]:)?(?:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] ?)?" + _COMPILE_ID
               + r"torch\.[\w.]*?\.__(?P<artifact>\w+): \[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\] ")
_OLD = re.compile(_OLD_PREFIX)
# a line of any TORCH_LOGS artifact logger, glog or older: what tells a file of TORCH_LOGS text
_TAGGED = re.compile((glog.PREFIX + r"(?:\[[^\]\n]*\] )?\[__\w+\]|" + _OLD_PREFIX).encode())
_CANNOT_FUSE = re.compile(r"cannot fuse (\S+) with (\S+): (.*)$")
_FUSING = re.compile(r"fusing (\S+) with (\S+)$")
_BENCHMARK = re.compile(r"can fuse \(benchmark\): (.*)$")
_BENCHMARK_REFUSAL = re.compile(r"cannot fuse \(benchmark\): fusing (OrderedSet\(.*?\)) with (OrderedSet\(.*?\)) cause (.*)$")
_QUOTED = re.compile(r"'([^']*)'")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_AT_FILE_LINE = re.compile(r" at (.+):(\d+)$")
_IN_FILE_LINE = re.compile(r" in (.+):(\d+)$")
_TRACEBACK_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)(?:, in (\S+))?')
_RECOMPILED = re.compile(r"^Recompiling function (\S+) in ")
_TRACEBACK = "Traceback (most recent call last):"
# the last line of a logged exception, unindented: `torch._dynamo.exc.Unsupported: Tensor.item`
_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*: (.*)$")
# a chained exception's traceback follows: the reason is the last exception's
_CHAINED = ("The above exception was the direct cause", "During handling of the above exception")
_SKIP = "skip:"  # `Graph break: skip: from user code at:`, convert_frame.py 2.4 to 2.7 at least

_TAGS = ("[__fusion] ", "[__graph_breaks] ", "[__recompiles] ", "[__recompiles_verbose] ", "[__cudagraphs] ")
_CUDAGRAPH_SKIP = re.compile(r"skipping cudagraphs? due to (.*?)(?:\. Found from\s*:\s*)?$")
_CUDAGRAPH_RERECORD = re.compile(r"Re-recording function=(\S+?),? mode=(\S+?),? reason=(.*)$")
_LEADING_COMPILE_ID = re.compile(r"^\[(!?[\d/_-]+)\] ")


def is_torch_logs(head: bytes) -> bool:
    """True when the head of a file holds a line of a TORCH_LOGS artifact logger (any of them:
    `graph_code` or `aot_graphs` output may fill the head before the first graph break)."""
    return b"__" in head and _TAGGED.search(head) is not None  # one scan for both tags before any regex


def parse_torch_logs(lines: Iterable[str]) -> Parsed:
    parsed = Parsed()
    events = _EventBuilder(parsed)
    autotune = AutotuneTables(parsed)
    pending_benchmark: str | None = None
    candidates = Candidates(parsed)
    unread: Counter[str] = Counter()  # tag -> lines of a logger we read whose prefix we could not
    for lineno, line in enumerate(lines, 1):
        if autotune.open or line.startswith(AUTOTUNE_STARTS):
            if autotune.feed(line.rstrip("\r\n"), lineno):
                continue
        tagged = _tagged(line, unread)
        if tagged is None:
            if "[__" in line:
                continue  # a logger we do not read
            if "Best config for " in line:
                candidates.best(line, lineno)
            elif "nreg " in line or "Benchmark all input configs for " in line:
                candidates.feed(line, lineno)
            continue
        tag, key, prefix, message = tagged
        compile_id = prefix.group("compile_id")
        autotune.compile_id = compile_id or autotune.compile_id
        message = message.rstrip("\r\n")
        if tag == "[__fusion] ":
            events.close()
            pending_benchmark = _fusion_line(parsed, message, compile_id, lineno, pending_benchmark)
        elif tag == "[__cudagraphs] ":
            _cudagraph_line(parsed, message, compile_id)
        else:
            events.feed(key, tag, message, compile_id, lineno)
    events.close()
    events.unlogged_breaks()
    autotune.close()
    _warn_unread(parsed, unread)
    return parsed


def _tagged(line: str, unread: Counter[str]) -> tuple[str, str, re.Match[str], str] | None:
    """(tag, key, prefix, message) of a line of a logger we read, the key being what the lines of one
    message share; None for any other line, or one whose prefix cannot be read (counted in `unread`)."""
    if "[__" in line:
        for tag in _TAGS:
            idx = line.find(tag)
            if idx >= 0:
                break
        else:
            return None
        head = line[:idx]
        prefix = _PREFIX.match(head) or _PREFIX_INSIDE.search(head)
        if prefix is None:
            unread[tag] += 1
            return None
        # output written before the prefix, on the same line, is no part of the message
        return tag, head[prefix.start():] + tag, prefix, line[idx + len(tag):]
    if ".__" in line and (prefix := _OLD.search(line)) is not None:
        tag = f"[__{prefix['artifact']}] "
        return (tag, prefix.group(), prefix, line[prefix.end():]) if tag in _TAGS else None
    return None


def _warn_unread(parsed: Parsed, unread: Counter[str]) -> None:
    """A warning for lines of the loggers we read that gave nothing: a loss said, never silent."""
    if unread:
        parsed.counters["torch_logs.unrecognised_prefix"] += unread.total()
        tags = ", ".join(f"{n} {tag.strip()}" for tag, n in sorted(unread.items()))
        parsed.problem(f"TORCH_LOGS lines with a prefix this reader does not know were not read ({tags})",
                       severity="warning")
    skipped = {k: n for k, n in parsed.counters.items() if k.startswith("torch_logs.skipped[")}
    if skipped and not parsed.rows:
        tags = ", ".join(f"{n} {k.removeprefix('torch_logs.skipped')}" for k, n in sorted(skipped.items()))
        parsed.problem(f"no TORCH_LOGS message of this file could be read: its graph-break and recompile lines "
                       f"are in a form this reader does not know ({tags})", severity="warning")


def _fusion_line(parsed: Parsed, message: str, compile_id: str | None, lineno: int, benchmark: str | None) -> str | None:
    """Adds the row the message states; returns the benchmark note waiting for its fusion."""
    if message.startswith("cannot fuse (benchmark)"):
        # benchmark_fusion measured the fused kernel slower: a refusal, of buffer sets
        m = _BENCHMARK_REFUSAL.match(_ANSI.sub("", message))
        if m is None:
            parsed.problem(f"cannot read fusion refusal: {message[:200]}", lineno, "warning")
            return benchmark
        _decision(parsed, compile_id, _buffers(m.group(1)), _buffers(m.group(2)), "refused",
                  f"benchmark: {m.group(3)}", lineno)
    elif message.startswith("cannot fuse "):
        m = _CANNOT_FUSE.match(message)
        if m is None:
            parsed.problem(f"cannot read fusion refusal: {message[:200]}", lineno, "warning")
            return benchmark
        _decision(parsed, compile_id, m.group(1), m.group(2), "refused", m.group(3), lineno)
    elif message.startswith("fusing "):
        m = _FUSING.match(message)
        if m is None:
            parsed.problem(f"cannot read fusion: {message[:200]}", lineno, "warning")
            return benchmark
        _decision(parsed, compile_id, m.group(1), m.group(2), "fused", benchmark, lineno)
        return None
    elif message.startswith("can fuse (benchmark)"):
        m = _BENCHMARK.match(_ANSI.sub("", message))
        return f"benchmark: {m.group(1)}" if m else benchmark
    return benchmark


def _cudagraph_line(parsed: Parsed, message: str, compile_id: str | None) -> None:
    """`skipping cudagraphs due to <reason>` (a compile or run cudagraphs left alone) and
    `Re-recording function=<f>, mode=<m>, reason=<why>` (a graph recorded again): cudagraph_events.
    Recordings themselves are counted from the trace (CUDAGraphNode.record spans)."""
    m = _LEADING_COMPILE_ID.match(message)
    if m:
        compile_id, message = compile_id or m.group(1), message[m.end():]
    if (m := _CUDAGRAPH_SKIP.match(message)) is not None:
        kind, reason = "skip", m.group(1)
    elif (m := _CUDAGRAPH_RERECORD.match(message)) is not None:
        kind, reason = "rerecord", f"{m.group(1)} ({m.group(2)}): {m.group(3)}"
    else:
        return
    parsed.add("cudagraph_events", {"compile_id": compile_id, "kind": kind, "reason": reason.strip(), "n": 1,
                                    "source": SOURCE})


def _buffers(ordered_set: str) -> str:
    """`OrderedSet(['buf2', 'buf3'])` -> `buf2,buf3`: the buffers a benchmarked node writes."""
    return ",".join(_QUOTED.findall(ordered_set)) or ordered_set


def _decision(parsed: Parsed, compile_id: str | None, node_a: str, node_b: str, decision: str, reason: str | None,
              lineno: int) -> None:
    parsed.add(
        "fusion_decisions",
        {
            "compile_id": compile_id,
            "node_a": node_a,
            "node_b": node_b,
            "decision": decision,
            "reason": reason,
            "line": lineno,
        },
    )


# the first line of a graph-break or recompile message; a line of the message's body may start with
# "Graph break" too (the title "Graph break under GenericContextWrappingVariable")
# torch 2.0/2.1 said the reason on the first line: `Graph break: <reason> from user code at:`
_INLINE_REASON = re.compile(r"^Graph break: (.+?) from user code at:?$")
_EVENT_START = re.compile(r"Graph break(?: in user code at |: | \(user stack suppressed)|Recompiling function")


class _EventBuilder:
    """Collects the lines of one multi-line graph-break or recompile message."""

    def __init__(self, parsed: Parsed) -> None:
        self.parsed = parsed
        self.key: str | None = None
        self.event: CompileEventRow | None = None
        self.failures: list[str] = []
        self.start_line: int | None = None
        self.from_stack = False  # a break whose first line names no place: its user stack does
        self.in_traceback = False  # past the `Traceback` line of a 2.2-2.5 break: Dynamo's frames
        self.exception: list[str] | None = None  # the lines of its exception, once its line came
        self.exception_done = False  # past the exception's message
        self.skip = False  # `Graph break: skip:`: convert_frame's note of a frame it ran eagerly
        self.frame: tuple[str, str] | None = None  # (file, function) of the frame an event is of
        self.broke: set[tuple[str, str]] = set()  # frames a break was logged in, by a release before 2.6
        self.before_2_6 = False  # a break logged the way 2.2 to 2.5 log them (its user stack below)
        self.modern = False  # a break logged the way 2.6 and later log them
        self.old_skip = False  # a frame skipped, logged as 2.4 to 2.7 log it: of either era
        self.recompiled: list[tuple[tuple[str, str], CompileEventRow]] = []

    def feed(self, key: str, tag: str, message: str, compile_id: str | None, lineno: int) -> None:
        if key != self.key or _EVENT_START.match(message):
            self.close()
            self.key = key
        if self.event is None:
            self._start(tag, message, compile_id, lineno)
        elif self.event["kind"] == "graph_break":
            self._graph_break_detail(message)
        else:
            self._recompile_detail(message)

    def _start(self, tag: str, message: str, compile_id: str | None, lineno: int) -> None:
        if tag == "[__graph_breaks] " and _EVENT_START.match(message):
            m = _AT_FILE_LINE.search(message)
            kind = "graph_break"
        elif tag.startswith("[__recompiles") and message.startswith("Recompiling function"):
            m = _IN_FILE_LINE.search(message)
            kind = "recompile"
        else:
            self.parsed.counters[f"torch_logs.skipped{tag.strip()}"] += 1
            return
        self.start_line = lineno
        inline = _INLINE_REASON.match(message) if kind == "graph_break" else None
        self.event = {
            "compile_id": compile_id,
            "kind": kind,
            "reason": inline.group(1) if inline else None,
            "user_file": m.group(1) if m else None,
            "user_line": int(m.group(2)) if m else None,
            "source": SOURCE,
        }
        self.failures = []
        self.from_stack = kind == "graph_break" and m is None
        self.in_traceback, self.exception, self.exception_done = False, None, False
        if inline is not None and inline.group(1) == _SKIP:  # a frame that fell back to eager
            self.event["reason"], self.skip = None, True
            self.old_skip = True
        elif kind == "graph_break" and break_kind(message) is SKIPPED:  # 2.9+'s `... results in a skip.`
            self.skip = True
        elif kind == "graph_break" and m is not None:
            self.modern = True  # `Graph break in user code at F:L`: 2.6 and later
        fn = _RECOMPILED.match(message) if kind == "recompile" else None
        self.frame = (m.group(1), fn.group(1)) if m and fn else None

    def _graph_break_detail(self, message: str) -> None:
        event = self.event
        assert event is not None, "a detail line follows its graph break's first line"
        text = message.strip()
        if event["reason"] is None:
            for label in ("Graph Break Reason: ", "Reason: "):
                if text.startswith(label):
                    event["reason"] = text[len(label):]
                    return
        if text == _TRACEBACK or text.startswith(_CHAINED):
            self.in_traceback, self.exception, self.exception_done = True, None, False
            return
        if self.in_traceback:
            self._exception_line(message)
            return
        if self.from_stack:
            # older messages ("Graph break: from user code at:") give the user stack, outermost
            # frame first: the break is at its last frame (Dynamo's frame_loc, user_stack[-1])
            frame = _TRACEBACK_FRAME.match(message)
            if frame:
                event["user_file"], event["user_line"] = frame.group(1), int(frame.group(2))
                if self.frame is None and frame.group(3):  # the outermost: the compiled frame
                    self.frame = (frame.group(1), frame.group(3))

    def _exception_line(self, message: str) -> None:
        """A line of the logged exception of a 2.2-2.5 break: its last line names the exception and its
        message (which may go on over more lines), the reason Dynamo counts the break under."""
        if self.exception is not None:
            if not self.exception_done:
                # a frame's failure comes augmented (exc.py augment_exc_message): a blank line, then
                # `from user code:` and advice, no part of the message Dynamo counts
                self.exception_done = not message.strip()
                if not self.exception_done:
                    self.exception.append(message.rstrip())
        elif not message[:1].isspace() and (m := _EXCEPTION_LINE.match(message.rstrip())) is not None:
            self.exception = [m.group(1)]

    def _recompile_detail(self, message: str) -> None:
        text = message.strip()
        if text.startswith("- "):
            self.failures.append(text[2:])

    def close(self) -> None:
        if self.event is not None:
            if self.event["reason"] is None and self.exception:
                self.event["reason"] = "\n".join(self.exception).strip() or None
            if self.failures:  # one recompile: a failed guard per cached entry
                self.event["reason"] = "\n".join(self.failures)
                self.event["details"] = list(self.failures)
            event = self.event
            kind: str | None = event["kind"]
            if kind == "graph_break":
                reason = event["reason"]
                kind = SKIPPED if self.skip else break_kind(reason) if reason is not None else kind
            skipped = kind is SKIPPED
            if kind is SKIPPED:
                # a frame that fell back to eager: Dynamo counted its Unsupported as unimplemented, no
                # graph break, and the frame's compile as failed (compilation_metrics' fail_type)
                self.parsed.counters["torch_logs.graph_break_of_a_skipped_frame"] += 1
                kind, event["fallback"] = "failure", True
            event["kind"] = kind
            # the frame a recompile names, the user line of a graph break
            event["origin"] = origin(event["user_file"])
            event["cause_id"], event["cause_title"] = cause_of(kind, event["reason"])
            if event["reason"] is None:
                self.parsed.problem(f"{event['kind']} without a reason", self.start_line, "warning")
            self.parsed.add("compile_events", event)
            if self.frame is not None:
                if event["kind"] == "recompile":
                    self.recompiled.append((self.frame, event))
                elif self.from_stack and not skipped:
                    self.broke.add(self.frame)
            # convert_frame writes a skipped frame's user stack below its first line in 2.6+ too: no era told
            self.before_2_6 |= self.from_stack and not skipped
        self.key = None
        self.event = None
        self.failures = []
        self.frame = None
        self.skip = False

    def unlogged_breaks(self) -> None:
        """An UNKNOWN_BREAK per recompile of a frame that logged a break the way 2.5 and before log
        them, once per place: its compile may have broken there again, counted and not logged. And
        an UNKNOWN_UNCOUNTED for such a log: those releases log no data-dependent branch (generic_jump
        raises nothing and logs nothing: trace_breaks.py), so it cannot tell the breaks Dynamo does
        not count."""
        if self.before_2_6:
            self.parsed.add("compile_events", {
                "compile_id": None, "kind": UNKNOWN_UNCOUNTED, "source": SOURCE, "user_file": None, "user_line": None,
                "reason": "PyTorch before 2.6 logs no data-dependent branch: its uncounted breaks are not in the log"})
        elif self.old_skip and not self.modern:
            self.parsed.add("compile_events", {
                "compile_id": None, "kind": UNKNOWN_UNCOUNTED, "source": SOURCE, "user_file": None, "user_line": None,
                "reason": ("a frame skipped, logged as PyTorch 2.4 to 2.7 log it, and no break logged as 2.6 and "
                           "later log them: PyTorch before 2.6 logs no data-dependent branch, so the log may lack "
                           "its uncounted breaks")})
        for (file, fn), recompile in self.recompiled:
            if (file, fn) in self.broke:
                self.parsed.add("compile_events", {
                    "compile_id": recompile["compile_id"], "kind": UNKNOWN_BREAK, "source": SOURCE,
                    "reason": (f"{fn} recompiled after a graph break in it, which PyTorch before 2.6 logs once "
                               "per place: a break of this compile would not be logged again"),
                    "user_file": recompile["user_file"], "user_line": recompile["user_line"],
                    "origin": recompile.get("origin"), "cause_id": None, "cause_title": None})
