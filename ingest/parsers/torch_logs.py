"""TORCH_LOGS text (stderr of a run with TORCH_LOGS="graph_breaks,recompiles,fusion,cudagraphs").

Every glog line of a logged message repeats the full prefix, e.g.

    V1122 00:02:09.264000 4187 torch/_inductor/scheduler.py:1388] [0/0] [__fusion] cannot fuse op1 with op3: no shared data

so a multi-line message (graph break, recompile) is the run of consecutive lines that share
one prefix. Lines of other loggers and plain stderr (warnings, autotune tables) are skipped
with a substring test before any regex runs: the fusion logger alone writes ~100k lines a run.

Rows:
- fusion_decisions: `cannot fuse A with B: reason` -> refused; `fusing A with B` -> fused (the
  scheduler prints it when it fuses). A preceding `can fuse (benchmark): ... cause 1.2x speedup`
  (benchmark_fusion) becomes the fused row's reason; other fused rows have reason None.
  `cannot fuse (benchmark): fusing OrderedSet(['buf2']) with OrderedSet(['buf3']) cause 1.3x
  slowdown` -> refused, the nodes named by the buffers they write.
- compile_events: `Graph break ... in user code at FILE:LINE` + `Graph Break Reason: ...`
  (older torch: `Reason: ...`) -> graph_break; `Recompiling function F in FILE:LINE` + its
  `- <guard failure>` lines -> recompile, reason = the failures joined by newlines.
- cudagraph_events: `skipping cudagraphs due to <reason>` -> skip; `Re-recording function=...` ->
  rerecord (see _cudagraph_line).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import orjson

from inductor_warehouse.ingest.parsers.user_code import is_library_file
from inductor_warehouse.ingest.rows import Parsed

SOURCE = "torch_logs"

# Everything up to the logger tag: level+date, time, thread, file:line, then an optional
# `[compile id]` (0/0, 1/0_1, !0/7/0). `[rank0]:` prefixes come from distributed launchers.
_PREFIX = re.compile(
    r"^(?:\[rank\d+\]:)?[VDIWEC]\d{4} [\d:.]+ +\d+ [^\]]+:\d+\] (?:\[(!?[\d/_]+)\] )?$"
)
_CANNOT_FUSE = re.compile(r"cannot fuse (\S+) with (\S+): (.*)$")
_FUSING = re.compile(r"fusing (\S+) with (\S+)$")
_BENCHMARK = re.compile(r"can fuse \(benchmark\): (.*)$")
_BENCHMARK_REFUSAL = re.compile(r"cannot fuse \(benchmark\): fusing (OrderedSet\(.*?\)) with (OrderedSet\(.*?\)) cause (.*)$")
_QUOTED = re.compile(r"'([^']*)'")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_AT_FILE_LINE = re.compile(r" at (.+):(\d+)$")
_IN_FILE_LINE = re.compile(r" in (.+):(\d+)$")
_TRACEBACK_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')

_TAGS = ("[__fusion] ", "[__graph_breaks] ", "[__recompiles] ", "[__recompiles_verbose] ", "[__cudagraphs] ")
_CUDAGRAPH_SKIP = re.compile(r"skipping cudagraphs? due to (.*?)(?:\. Found from\s*:\s*)?$")
_CUDAGRAPH_RERECORD = re.compile(r"Re-recording function=(\S+?),? mode=(\S+?),? reason=(.*)$")
_LEADING_COMPILE_ID = re.compile(r"^\[(!?[\d/_-]+)\] ")


def is_torch_logs(head: bytes) -> bool:
    """True when the head of a file holds glog lines of the TORCH_LOGS loggers we read."""
    return any(tag.encode() in head for tag in _TAGS)


def parse_torch_logs(lines: Iterable[str]) -> Parsed:
    parsed = Parsed()
    events = _EventBuilder(parsed)
    autotune = _AutotuneTables(parsed)
    pending_benchmark: str | None = None
    candidates = _Candidates(parsed)
    for lineno, line in enumerate(lines, 1):
        if autotune.open or line.startswith(_AUTOTUNE_STARTS):
            if autotune.feed(line.rstrip("\r\n"), lineno):
                continue
        if "[__" not in line:
            if "Best config for " in line:
                candidates.best(line, lineno)
            elif "nreg " in line or "Benchmark all input configs for " in line:
                candidates.feed(line, lineno)
            continue
        for tag in _TAGS:
            idx = line.find(tag)
            if idx >= 0:
                break
        else:
            continue
        head = line[:idx]
        prefix = _PREFIX.match(head)
        if prefix is None:
            parsed.counters["torch_logs.unrecognised_prefix"] += 1
            continue
        compile_id = prefix.group(1)
        autotune.compile_id = compile_id or autotune.compile_id
        message = line[idx + len(tag):].rstrip("\r\n")
        if tag == "[__fusion] ":
            events.close()
            pending_benchmark = _fusion_line(parsed, message, compile_id, lineno, pending_benchmark)
        elif tag == "[__cudagraphs] ":
            _cudagraph_line(parsed, message, compile_id)
        else:
            events.feed(head + tag, tag, message, compile_id, lineno)
    events.close()
    autotune.close()
    return parsed


# Inductor's autotuner at debug level (TORCH_LOGS="+torch._inductor.runtime.triton_heuristics"), once
# it timed a kernel's configs: `Benchmark all input configs for K, get:`, then a line for each config
# it timed, then `Best config for K: ...`, the one it keeps; each with the registers, spills and
# shared memory of its binary (Triton reads them at load; no other artifact holds them)
_BEST_CONFIG = re.compile(r"\] (?:\[(!?[\d/_]+)\] )?Best config for (?P<kernel>\S+): (?P<config>.*): (?P<ms>[^:,]+), "
                          r"nreg (?P<nreg>-?\d+), nspill (?P<nspill>-?\d+), #shared-mem (?P<shared>\S+)$")
_BENCHMARK_ALL = re.compile(r"\] (?:\[(!?[\d/_]+)\] )?Benchmark all input configs for (?P<kernel>\S+), get:$")
_CANDIDATE = re.compile(r"\] (?:\[(!?[\d/_]+)\] )?(?P<config>\w+: .*): (?P<ms>[^:,]+), "
                        r"nreg (?P<nreg>-?\d+), nspill (?P<nspill>-?\d+), #shared-mem (?P<shared>\S+)$")
_CONFIG_ITEM = re.compile(r"(\w+): ([^,]+)")


class _Candidates:
    """The configs the autotuner timed for a kernel (chosen false), until its `Best config` line
    marks the one it keeps (chosen true); a best config without candidate lines is a row of its own."""

    def __init__(self, parsed: Parsed):
        self.parsed = parsed
        self.kernel: str | None = None
        self.compile_id: str | None = None
        self.rows: list[dict] = []

    def feed(self, line: str, lineno: int) -> None:
        text = line.rstrip("\r\n")
        if (m := _BENCHMARK_ALL.search(text)) is not None:
            self.kernel, self.compile_id, self.rows = m["kernel"], m.group(1), []
        elif self.kernel is not None and (m := _CANDIDATE.search(text)) is not None:
            row = _config_row(m, self.kernel, m.group(1) or self.compile_id, False, lineno)
            self.rows.append(row)
            self.parsed.add("triton_kernels", row)

    def best(self, line: str, lineno: int) -> None:
        m = _BEST_CONFIG.search(line.rstrip("\r\n"))
        if m is None:
            self.parsed.counters["torch_logs.best_config_unread"] += 1
            return
        timed = [r for r in self.rows if r["config"] == m["config"]] if self.kernel == m["kernel"] else []
        if timed:
            timed[0]["chosen"] = True
        else:
            self.parsed.add("triton_kernels", _config_row(m, m["kernel"], m.group(1), True, lineno))
        self.kernel, self.rows = None, []


def _config_row(m: re.Match, kernel: str, compile_id: str | None, chosen: bool, lineno: int) -> dict:
    items = dict(_CONFIG_ITEM.findall(m["config"]))
    return {
        "compile_id": compile_id, "kernel_name": kernel, "source": SOURCE, "cache_key": None,
        "num_warps": _int_text(items.get("num_warps")), "num_stages": _int_text(items.get("num_stages")),
        "num_ctas": _int_text(items.get("num_ctas")), "maxnreg": _int_text(items.get("maxnreg")),
        "shared_bytes": _int_text(m["shared"]), "target": None, "triton_version": None,
        "config": m["config"], "chosen": chosen, "autotune_state": None, "num_configs": None, "compile_time_us": None,
        "n_regs": int(m["nreg"]), "n_spills": int(m["nspill"]),
        "metadata": {"time_ms": _float_text(m["ms"]), "line": lineno},
    }


def _int_text(v: str | None) -> int | None:
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def _float_text(v: str) -> float | None:
    try:
        return float(v)
    except ValueError:
        return None


_AUTOTUNE_STARTS = ("Autotune Choices Stats:", "AUTOTUNE ")
_AUTOTUNE_HEAD = re.compile(r"^AUTOTUNE (\w+)\((.*)\)$")
_AUTOTUNE_ROW = re.compile(r"^  (\S+) ([\d.]+) ms (?:([\d.]+)%|(DIVIDED BY ZERO ERROR))\s?(.*)$")
_AUTOTUNE_END = re.compile(r"^\w+ AUTOTUNE (?:benchmarking )?takes .*?(?: for (\d+) choices)?(?: and .*)?$")


class _AutotuneTables:
    """max-autotune's tables, printed plainly on stderr (no glog prefix) after each op it tuned:

        Autotune Choices Stats:                    (2.9+)
        {"num_choices": 20, "best_kernel": "bias_addmm", ...}
        AUTOTUNE addmm(8x1024, 8x512, 512x1024)
        strides: [0, 1], [512, 1], [1, 512]        (2.8+)
        dtypes: torch.bfloat16, ...                (2.8+)
          bias_addmm 0.0059 ms 100.0%
          triton_mm_1 0.0069 ms 85.3% ACC_TYPE='tl.float32', ..., num_stages=2, num_warps=2
        SingleProcess AUTOTUNE benchmarking takes 0.3894 seconds and ... for 20 choices

    Only the fastest rows are printed (10 by default); num_choices says how many were timed. The
    compile id is the one of the last prefixed log line before the table, when there was one."""

    def __init__(self, parsed: Parsed):
        self.parsed = parsed
        self.compile_id: str | None = None
        self.open = False
        self.stats: dict = {}
        self.table: dict | None = None
        self.rows: list[dict] = []
        self.seq = 0
        self.expect_stats = False

    def feed(self, line: str, lineno: int) -> bool:
        """Takes the line when it belongs to a table; False hands it back to the glog parsing."""
        if line.startswith("Autotune Choices Stats:"):
            self.close()
            self.open, self.expect_stats = True, True
            return True
        if self.expect_stats:
            self.expect_stats = False
            try:
                stats = orjson.loads(line)
                self.stats = stats if isinstance(stats, dict) else {}
                return True
            except orjson.JSONDecodeError:
                self.parsed.problem(f"autotune stats are not JSON: {line[:120]}", lineno, "warning")
                self.stats = {}
        m = _AUTOTUNE_HEAD.match(line)
        if m:
            self.close(keep_stats=True)
            self.open = True
            self.table = {"op": m.group(1), "shapes": m.group(2), "strides": None, "dtypes": None, "line": lineno}
            return True
        if self.table is None:
            self.open = bool(self.stats)
            return False
        if line.startswith("strides: "):
            self.table["strides"] = line[len("strides: "):]
        elif line.startswith("dtypes: "):
            self.table["dtypes"] = line[len("dtypes: "):]
        elif (row := _AUTOTUNE_ROW.match(line)) is not None:
            pct = float(row.group(3)) if row.group(3) else None
            self.rows.append({"choice": row.group(1), "time_ms": float(row.group(2)), "pct": pct,
                              "config": row.group(5).strip(), "line": lineno})
        elif (end := _AUTOTUNE_END.match(line)) is not None:
            self.close(num_choices=int(end.group(1)) if end.group(1) else None)
        else:
            self.close()  # a table cut short: keep what it listed
            return False
        return True

    def close(self, num_choices: int | None = None, keep_stats: bool = False) -> None:
        if self.table is not None:
            self.seq += 1
            t = self.table
            n = num_choices or _int(self.stats.get("num_choices"))
            for rank, r in enumerate(self.rows, 1):
                self.parsed.add("autotune_choices", {
                    "compile_id": self.compile_id, "seq": self.seq, "op": t["op"], "shapes": t["shapes"],
                    "strides": t["strides"], "dtypes": t["dtypes"], "num_choices": n, "rank": rank,
                    "choice": r["choice"], "config": r["config"], "time_ms": r["time_ms"], "pct": r["pct"],
                    "winner": rank == 1, "source": SOURCE, "line": r["line"],
                })
            if not self.rows:
                self.parsed.counters["autotune_table_without_rows"] += 1
        self.table, self.rows, self.open = None, [], False
        if not keep_stats:
            self.stats = {}


def _int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _fusion_line(parsed: Parsed, message: str, compile_id, lineno: int, benchmark: str | None):
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


def _cudagraph_line(parsed: Parsed, message: str, compile_id) -> None:
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


def _decision(parsed: Parsed, compile_id, node_a, node_b, decision, reason, lineno) -> None:
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


class _EventBuilder:
    """Collects the lines of one multi-line graph-break or recompile message."""

    def __init__(self, parsed: Parsed):
        self.parsed = parsed
        self.key: str | None = None
        self.event: dict | None = None
        self.failures: list[str] = []
        self.start_line: int | None = None

    def feed(self, key: str, tag: str, message: str, compile_id, lineno: int) -> None:
        if key != self.key or message.startswith(("Graph break", "Recompiling function")):
            self.close()
            self.key = key
        if self.event is None:
            self._start(tag, message, compile_id, lineno)
        elif self.event["kind"] == "graph_break":
            self._graph_break_detail(message)
        else:
            self._recompile_detail(message)

    def _start(self, tag: str, message: str, compile_id, lineno: int) -> None:
        if tag == "[__graph_breaks] " and message.startswith("Graph break"):
            m = _AT_FILE_LINE.search(message)
            kind = "graph_break"
        elif tag.startswith("[__recompiles") and message.startswith("Recompiling function"):
            m = _IN_FILE_LINE.search(message)
            kind = "recompile"
        else:
            self.parsed.counters[f"torch_logs.skipped{tag.strip()}"] += 1
            return
        self.start_line = lineno
        self.event = {
            "compile_id": compile_id,
            "kind": kind,
            "reason": None,
            "user_file": m.group(1) if m else None,
            "user_line": int(m.group(2)) if m else None,
            "source": SOURCE,
        }
        self.failures = []

    def _graph_break_detail(self, message: str) -> None:
        event = self.event
        text = message.strip()
        if event["reason"] is None:
            for label in ("Graph Break Reason: ", "Reason: "):
                if text.startswith(label):
                    event["reason"] = text[len(label):]
                    return
        if event["user_file"] is None:
            # older messages ("Graph break: from user code at:") name the frame in the traceback
            frame = _TRACEBACK_FRAME.match(message)
            if frame:
                event["user_file"], event["user_line"] = frame.group(1), int(frame.group(2))

    def _recompile_detail(self, message: str) -> None:
        text = message.strip()
        if text.startswith("- "):
            self.failures.append(text[2:])

    def close(self) -> None:
        if self.event is not None:
            if self.failures:  # one recompile: a failed guard per cached entry
                self.event["reason"] = "\n".join(self.failures)
                self.event["details"] = list(self.failures)
            # the frame a recompile names, the user line of a graph break
            self.event["in_library"] = is_library_file(self.event["user_file"])
            if self.event["reason"] is None:
                self.parsed.problem(f"{self.event['kind']} without a reason", self.start_line, "warning")
            self.parsed.add("compile_events", self.event)
        self.key = None
        self.event = None
        self.failures = []
