"""TORCH_TRACE structured logs (`dedicated_log_torch_trace_*.log`), read as a stream of bytes.

A record is one glog header line whose message is a JSON envelope, followed by its payload
lines, each starting with one TAB:

    V1122 00:09:40.916000 18849 torch/_dynamo/guards.py:5400] {"artifact": {...}, "frame_id": 0, ..., "has_payload": "<md5>"}
    \t0/0: tensor 'x' rank mismatch. expected 2, actual 3

Only one record's payload (and one read) is held at a time, so memory stays flat as logs grow. Payloads are
decoded only for the kinds read below. `has_payload` (md5 of the payload lines without their
TAB, joined by "\\n") is checked for every record; a mismatch is a warning and the record is
still used. A bad envelope is an error and its payload lines are skipped. Records the catalog
(`ingest/catalog.py`) does not know are counted (`unknown_kind:<k>`, `unknown_artifact:<name>`),
never errors, and every run says which records it had (trace_records). `encoding` is not trusted:
JSON is tried, text kept.

Compile ids are written as the trace writes them (`0/0`, `1/0_1`, `!0/7/0`, `!0/-/-`):
- graphs, kernels, ops, lineage, guards, graph breaks, recompiles: the envelope's id, attempt
  included (a graph compiled after a graph-break restart is `0/0_1`);
- compilations, their timings, restarts and failures: compilation_metrics' own `compile_id`,
  which names the frame compile without the attempt (`0/0`); the envelope's id when the record
  has none (older torch). An id that differs by more than the attempt is a warning.
- chromium spans: the `compile_id` in the event's args (torch's spelling, `!0` -> `!0/-/-`),
  else the envelope's.

Graphs from output code: graph_id = `<aot_id>_<phase>` from output code's `# AOT ID:`, else
`trace_<compile id>_<compile order>`, with `_<compile order>` appended when the id was already
taken in this log; compile_order counts inductor_output_code records from 0 (the debug tree's
`.N` folder suffix). Ops: each post-grad graph waits in a queue per compile id
and goes to the next inductor_output_code of that compile id (each graph is logged just before
its output code; forward then backward pair in order). Provenance artifacts (stack traces, node
mappings) go to the latest output code of their compile id, which Inductor logs just before them.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque
from collections.abc import Iterable
from datetime import datetime, timezone

import orjson

from inductor_warehouse.ingest.catalog import NAMED_KINDS, UNKNOWN, handling_of
from inductor_warehouse.ingest.parsers import fx_graph, output_code, provenance
from inductor_warehouse.ingest.parsers.torch_trace_records import (
    CACHE_ARTIFACT,
    SHAPE_KINDS,
    ChromiumSpans,
    autotune_winner_row,
    automatic_dynamic_row,
    cudagraph_skip_row,
    cache_rows,
    compilation_rows,
    compile_id_of,
    dynamo_error_event,
    failure_event,
    frame_key,
    graph_break_row,
    guard_row,
    kernel_autotune_rows,
    normalise_torch_compile_id,
    recompile_rows,
    shape_row,
    stack_trace_rows,
    without_attempt,
)
from inductor_warehouse.ingest.rows import Parsed

# The glog prefix of every era: an optional `[rankN]:` (TORCH_LOGS text; traces put the rank in the
# envelope), level, MMDD, time, then the pid (2.5+) or a 64-bit thread id (2.3/2.4), then the
# source path, which may hold spaces or a Windows drive's colon, and its line.
_GLOG = re.compile(rb"(?:\[rank(\d+)\]:)?[VIWEC](\d\d)(\d\d) (\d\d:\d\d:\d\d\.\d{6}) (\d+) [^\]\n]*?:\d+\] ")
_SNIFF = re.compile(rb"(?:\[rank\d+\]:)?[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ [^\]\n]*?:\d+\] \{")
# Linux pids stop at 2^22: a larger 4th field is the thread id 2.3/2.4 wrote there
MAX_PID = 1 << 22

_CONTEXT_KEYS = frozenset({
    "frame_id", "frame_compile_id", "attempt", "compiled_autograd_id", "rank", "has_payload",
    "subgraph_name", "stack", "severity", "timestamp", "pathname", "thread",
})
# graph_dump names of AOTInductor's generated code; AOTI_CODE in known_graphs says the debug tree
# of the same process holds it (output_code.cpp), so the trace's copy is not parsed again
AOTI_CODE_NAMES = frozenset({"inductor_aot_wrapper_code", "inductor_aot_kernel_code", "inductor_aot_code"})
AOTI_CODE = "<aoti code>"
CUDAGRAPH_RECORD_SPAN = "CUDAGraphNode.record"  # one span per cudagraph recorded (dynamo_timed)
# a record starts at every line that is not a payload line (those start with a TAB)
_RECORD_START = re.compile(rb"\n(?=[^\t])")
_NL, _TAB = ord("\n"), ord("\t")
_RECORD_FIRST_BYTES = frozenset(b"[VIWEC")  # what a glog line starts with: never a blank line
_LINES_PER_CHUNK_BYTES = 1 << 20
_MAX_REPEATED_PROBLEMS = 100  # per kind of problem; a file of garbage gives 100 errors, then a count


def is_torch_trace(head: bytes) -> bool:
    """True when the first non-blank line of `head` is a glog line whose message is a JSON object."""
    for line in head.lstrip(b"\xef\xbb\xbf").split(b"\n", 8)[:8]:
        if line.strip():
            return _SNIFF.match(line) is not None
    return False


def parse_torch_trace(lines: Iterable[bytes]) -> Parsed:
    """Parse a TORCH_TRACE log given as raw lines (bytes, with or without their b"\\n")."""
    return parse_torch_trace_chunks(_chunks_of_lines(lines))


# Tables whose rows may leave the parser before the log ends (see `sink`); graphs stay: they are
# few, and the graph ids of later records are looked up among them.
SINKABLE = ("compilations", "timings", "compile_events", "guards", "kernels", "ops", "lineage")


SINK_EVERY = 16 << 20  # bytes of log between hand-overs of rows to `sink`


def parse_torch_trace_chunks(chunks: Iterable[bytes], sink=None, known_graphs: frozenset = frozenset()) -> Parsed:
    """Parse a TORCH_TRACE log given as consecutive pieces of its bytes, of any sizes (file reads).

    Records are cut out of the bytes where a line does not start with a TAB, so no Python code
    runs per payload line: a log has ten times more payload lines than records.
    With `sink`, the rows made so far are handed to `sink({table: rows})` after every
    SINK_EVERY bytes of log and dropped here, so memory stays flat however long the log is;
    the returned Parsed then holds only the rows made since the last hand-over.
    `known_graphs`: graph ids already read from a debug tree of the same process; their output code,
    post-grad graph and node mappings repeat it, so they are not parsed again (their compile ids are
    still reported in facts["graph_compile_ids"])."""
    state = _TraceState(known_graphs)
    held: list[bytes] = []  # bytes after the last record start seen: a record that may go on
    nbytes = since_sink = 0
    for chunk in chunks:
        if not chunk:
            continue
        nbytes += len(chunk)
        since_sink += len(chunk)
        starts_record = _RECORD_START.search(chunk) is not None or (
            held and held[-1][-1:] == b"\n" and chunk[:1] != b"\t")
        held.append(chunk)
        if starts_record:
            buf = b"".join(held)
            held = [buf[state.scan(buf):]]
        if sink is not None and since_sink >= SINK_EVERY:
            rows = state.parsed.rows
            sink({t: rows.pop(t) for t in SINKABLE if rows.get(t)})
            since_sink = 0
    buf = b"".join(held)
    done = state.scan(buf)
    if done < len(buf):
        state.segment(buf, done, len(buf))
    state.flush()
    counters = state.parsed.counters
    counters["lines"] += state.lineno
    counters["bytes"] += nbytes
    return state.close()


def _chunks_of_lines(lines: Iterable[bytes]) -> Iterable[bytes]:
    batch: list[bytes] = []
    size = 0
    for line in lines:
        if line[-1:] != b"\n":
            line += b"\n"
        batch.append(line)
        size += len(line)
        if size >= _LINES_PER_CHUNK_BYTES:
            yield b"".join(batch)
            batch, size = [], 0
    if batch:
        yield b"".join(batch)


class _TraceState:
    def __init__(self, known_graphs: frozenset = frozenset()):
        self.known_graphs = known_graphs
        self.parsed = Parsed()
        self.parsed.facts["graph_compile_ids"] = {}
        self.parsed.facts["graph_cache_states"] = {}  # graph id -> its FX graph cache outcome
        self.chromium = ChromiumSpans(self.parsed.counters, noted=self.on_chromium_data)
        self.strings: dict[int, str] = {}  # the log's `str` records: file names stacks refer to by index
        self.autotuned = 0  # autotuning spans seen: each op's place in the run
        self.lineno_of_record = 0
        self.compile_ids: dict[tuple, str | None] = {}
        self.first_glog: tuple | None = None  # (month, day, time) of the first record
        self.crlf = False
        self.metrics_epoch: float | None = None
        self.output_codes = 0
        self.cache_counts: dict[str | None, dict] = {}  # compile id -> (cache, outcome, local|remote) -> n
        self.latest_graph: dict[str | None, str] = {}  # compile id -> graph id of its latest output code
        # compile id -> post-grad graphs (line, text) waiting for their output code, parsed only then
        self.pending_ops: dict[str | None, deque] = {}
        self.problem_counts: dict[str, int] = {}
        self.lineno = 0  # lines scanned so far
        self.header: tuple | None = None  # (line number, kind, envelope, compile id) of the open record
        self.payload: list[bytes] | None = None  # the open record's payload lines, in blocks (see segment)
        self.payload_newlines = 0  # b"\n" inside the open record's blocks: each starts a payload line
        self.skipping = False  # payload lines of a record whose header was bad
        self.kinds: dict[str | None, int] = {}  # records by kind: counted into counters at close
        self.payload_md5: str | None = None  # of the record being finished, when it has has_payload
        # A failed compile is reported twice: a `dynamo_error` artifact, then the compile's metrics
        # (fail_type). One failure is stored: the metrics', which every release writes; an error
        # waits here (by compile id without attempt) for them, and stands alone when none come.
        self.pending_errors: dict[str | None, dict] = {}
        self.failed_compiles: set[str | None] = set()
        # frame (compile id less its last part) -> the file of the code it compiles, from dynamo_start
        # (written before a compile's events) or compilation_metrics: library frames are told apart
        self.frame_files: dict[str | None, str] = {}
        self.exports = 0  # exported programs seen
        self.named: dict[tuple, int] = {}  # (kind, name) -> records, for the kinds whose metadata names them
        self.aot_compiles: dict = {}  # compile ids AOTAutograd handed a graph on, in order
        self.started: set = set()  # frame compile ids a dynamo_start opened
        self.finished: set = set()  # and those a compilation_metrics closed
        self.aoti_wrapper: tuple | None = None  # (line, compile id, text, md5) of AOTInductor's wrapper code

    def scan(self, buf: bytes) -> int:
        """Takes every complete segment of `buf`; returns where the last, maybe unfinished, one starts."""
        pos = 0
        for m in _RECORD_START.finditer(buf):
            end = m.start() + 1
            self.segment(buf, pos, end)
            pos = end
        return pos

    def segment(self, buf: bytes, start: int, end: int) -> None:
        """buf[start:end] (never empty): one line that is not a payload line (or, at the start of a
        file, a payload line) and the payload lines after it, each with its b"\\n" (the file's last
        maybe not). Runs once a record: bytes are compared as ints, without slicing."""
        lineno = self.lineno + 1
        nl = buf.find(b"\n", start, end)
        first_end = end if nl < 0 else nl
        newlines = buf.count(b"\n", start, end)
        self.lineno += newlines + (buf[end - 1] != _NL)
        first = buf[start]
        if first == _TAB:
            self.payload_lines(buf, start, end, lineno, newlines)
            return
        line = buf[start:first_end]
        if first not in _RECORD_FIRST_BYTES and not line.strip():
            # not part of any payload (payload lines start with a TAB even when empty): the
            # payload lines after it go on the open record
            self.parsed.counters["blank_lines"] += 1
        else:
            self.flush()
            self.skipping = False
            self.record_line(line, lineno)
        if first_end + 1 < end:
            self.payload_lines(buf, first_end + 1, end, lineno + 1, newlines - 1)

    def payload_lines(self, buf: bytes, start: int, end: int, lineno: int, newlines: int) -> None:
        # a block is lines without the first one's TAB and the last one's b"\\n": joined by
        # b"\\n\\t", blocks give the payload once every b"\\n\\t" is made b"\\n"
        if buf[end - 1:end] == b"\n":
            block = buf[start + 1:end - 1]
            newlines -= 1
        else:
            block = buf[start + 1:end]
        if self.payload is not None:
            self.payload.append(block)
            self.payload_newlines += newlines
        elif self.skipping:
            self.parsed.counters["skipped_payload_lines"] += self._lines_in([block])
        else:
            for i in range(self._lines_in([block])):
                self.repeated_problem("line_problems", "payload line without a record header", lineno + i, "error")

    @staticmethod
    def _lines_in(blocks: list[bytes]) -> int:
        return sum(b.count(b"\n") + 1 for b in blocks)

    def record_line(self, line: bytes, lineno: int) -> None:
        parsed = self.parsed
        m = _GLOG.match(line)
        if m is None:
            self.repeated_problem(
                "line_problems", "not a TORCH_TRACE record line (glog prefix + JSON envelope)", lineno, "error"
            )
            self.skipping = True
            return
        try:
            envelope = orjson.loads(line[m.end():])
        except orjson.JSONDecodeError as e:
            parsed.problem(f"bad JSON envelope: {e}", lineno, "error")
            self.skipping = True
            return
        if not isinstance(envelope, dict):
            parsed.problem("JSON envelope is not an object", lineno, "error")
            self.skipping = True
            return
        self.header = self.start(lineno, m, envelope)
        self.payload = []
        self.payload_newlines = 0

    def flush(self) -> None:
        """Finish the open record, if any."""
        if self.header is not None:
            self.finish(self.header, self.payload)
            self.header = self.payload = None

    def repeated_problem(self, what: str, message: str, lineno: int, severity: str) -> None:
        """A problem that can recur on every line of a damaged file: the first ones are
        reported, the rest only counted."""
        seen = self.problem_counts[what] = self.problem_counts.get(what, 0) + 1
        if seen <= _MAX_REPEATED_PROBLEMS:
            self.parsed.problem(message, lineno, severity)
        else:
            self.parsed.counters[f"{what}_not_reported"] += 1

    def start(self, lineno: int, m: re.Match, envelope: dict) -> tuple:
        facts = self.parsed.facts
        if self.first_glog is None:
            self.first_glog = (int(m.group(2)), int(m.group(3)), m.group(4).decode())
            self.crlf = m.string.rstrip(b"\n").endswith(b"\r")
            process = int(m.group(5))
            facts["pid" if process <= MAX_PID else "thread_id"] = process
        if "rank" not in facts:
            rank = envelope.get("rank")
            if isinstance(rank, int) and not isinstance(rank, bool):
                facts["rank"] = rank
            elif m.group(1) is not None:
                facts["rank"] = int(m.group(1))
        for kind in envelope:  # the first key that is not context: a loop, not next() of a generator
            if kind not in _CONTEXT_KEYS:
                break
        else:
            kind = None
        key = (envelope.get("frame_id"), envelope.get("frame_compile_id"), envelope.get("attempt"),
               envelope.get("compiled_autograd_id"))
        try:
            cid = self.compile_ids.get(key, "")
        except TypeError:  # an id that is not a JSON scalar
            key = tuple(None if v is None else str(v) for v in key)
            cid = self.compile_ids.get(key, "")
        if cid == "":
            cid = self.compile_ids[key] = compile_id_of(*key)
        return lineno, kind, envelope, cid

    def finish(self, header: tuple, payload: list[bytes]) -> None:
        lineno, kind, envelope, cid = header
        counters = self.parsed.counters
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        data = _payload_bytes(payload, self.crlf, self.payload_newlines + len(payload) - 1) if payload else b""
        expected = envelope.get("has_payload")
        self.payload_md5 = None
        if expected is not None:
            self.payload_md5 = hashlib.md5(data).hexdigest()
            if self.payload_md5 == expected:
                counters["md5_verified"] += 1
            else:
                counters["md5_mismatch"] += 1
                self.repeated_problem(
                    "md5_mismatch", f"has_payload md5 mismatch on a {kind} record (record kept)", lineno, "warning"
                )
        elif payload:
            counters["payload_without_md5"] += 1
        if kind in NAMED_KINDS:
            meta = envelope[kind]
            named = (kind, meta.get("name") if isinstance(meta, dict) else None)
            self.named[named] = self.named.get(named, 0) + 1
        elif kind in _AOT_GRAPH_KINDS and cid not in self.aot_compiles:
            self.aot_compiles[cid] = None
        handler = _HANDLERS.get(kind)
        if handler is not None:
            self.lineno_of_record = lineno
            handler(self, lineno, envelope[kind], cid, data)

    # -- handlers: (lineno, kind metadata, compile id, payload bytes) ---------------------

    def on_metrics(self, lineno, metrics, cid, data, record_kind="compilation_metrics"):
        if not isinstance(metrics, dict):
            self.parsed.problem(f"{record_kind} metadata is not an object", lineno, "error")
            return
        own = metrics.get("compile_id")
        compile_id = own if isinstance(own, str) and own else cid
        if cid is not None and compile_id != cid and compile_id != without_attempt(cid):
            self.parsed.problem(
                f"{record_kind} compile_id {compile_id} disagrees with the envelope's {cid}", lineno, "warning"
            )
        if isinstance(metrics.get("co_filename"), str):
            self.frame_files.setdefault(frame_key(compile_id), metrics["co_filename"])
        compilation_rows(self.parsed, record_kind, metrics, compile_id)
        self.on_failure(failure_event(record_kind, metrics, compile_id))
        self.finished.add(without_attempt(compile_id))
        row = self.parsed.rows["compilations"][-1]
        counts = self.cache_counts.setdefault(compile_id, {})
        for cache, prefix in (("fx_graph", "fx_cache"), ("aot_autograd", "aot_cache")):
            for outcome, word in (("hit", "hits"), ("miss", "misses")):
                for where in ("local", "remote"):
                    counts[(cache, outcome, where)] = counts.get((cache, outcome, where), 0) + (
                        row[f"{prefix}_{where}_{word}"] or 0)
        facts = self.parsed.facts
        if record_kind == "compilation_metrics" and self.metrics_epoch is None:
            start = metrics.get("start_time")
            if isinstance(start, (int, float)) and not isinstance(start, bool) and start > 0:
                self.metrics_epoch = float(start)
        for fact, field in (("compiler_version", "pytorch_version"), ("python_version", "python_version"),
                            ("triton_version", "triton_version"), ("cuda_version", "cuda_version")):
            v = metrics.get(field)
            if isinstance(v, str) and v and fact not in facts:
                facts[fact] = v

    def on_bwd_metrics(self, lineno, metrics, cid, data):
        self.on_metrics(lineno, metrics, cid, data, "bwd_compilation_metrics")

    def on_dynamo_start(self, lineno, meta, cid, data):
        self.started.add(without_attempt(cid))
        stack = meta.get("stack") if isinstance(meta, dict) else None
        if isinstance(stack, list) and stack and isinstance(stack[-1], dict):
            name = stack[-1].get("filename")
            name = self.strings.get(name) if isinstance(name, int) else name
            if isinstance(name, str):
                self.frame_files[frame_key(cid)] = name

    def on_runtime_metrics(self, lineno, metrics, cid, data):
        # runtime work of a compiled graph (cudagraphify, autotuning at run time): only a cudagraph
        # skip is kept; the compile's own metrics hold the rest
        if isinstance(metrics, dict):
            own = metrics.get("compile_id")
            cudagraph_skip_row(self.parsed, metrics, own if isinstance(own, str) and own else cid,
                               "compilation_metrics")

    def on_str(self, lineno, meta, cid, data):
        if isinstance(meta, list) and len(meta) == 2 and isinstance(meta[1], int):
            self.strings[meta[1]] = str(meta[0])

    def on_shape(self, lineno, meta, cid, data, kind):
        shape_row(self.parsed, kind, meta, cid, self.strings, lineno)

    def on_chromium_data(self, event: dict, cid):
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        if event.get("name") == "automatic_dynamic":
            automatic_dynamic_row(self.parsed, args, cid, self.lineno_of_record)
        else:
            self.autotuned += 1
            autotune_winner_row(self.parsed, event["name"], args, cid, self.autotuned, self.lineno_of_record)

    def on_describe_tensor(self, lineno, meta, cid, data):
        # the device of the first tensor Dynamo saw: what a run killed before Inductor wrote code ran on
        if "tensor_device" not in self.parsed.facts and isinstance(meta, dict):
            m = _TENSOR_DEVICE.match(str(meta.get("device") or ""))
            if m:
                self.parsed.facts["tensor_device"] = m.group(1)

    def on_artifact(self, lineno, meta, cid, data):
        name = meta.get("name") if isinstance(meta, dict) else None
        handler = _ARTIFACTS.get(name)
        if handler is not None:
            handler(self, lineno, cid, data.decode("utf-8", "replace"))
        elif isinstance(name, str) and CACHE_ARTIFACT.match(name):
            self.on_cache(lineno, name, cid, data)

    def on_cache(self, lineno, name, cid, data):
        # an FX graph cache lookup is logged after the output code it gave (hit) or made (miss)
        graph_id = self.latest_graph.get(cid)
        payload = self._json(data, lineno, name) if data else None
        cache_rows(self.parsed, name, payload, cid, graph_id, lineno)
        row = self.parsed.rows["cache_events"][-1]
        if row["cache"] in ("fx_graph", "bundled_fx_graph") and graph_id is not None and row["outcome"]:
            self.parsed.facts["graph_cache_states"][graph_id] = row["outcome"]

    def on_kernel_info(self, lineno, cid, text):
        payload = self._json(text, lineno, "triton_kernel_info")
        kernel_autotune_rows(self.parsed, payload, cid, self.latest_graph.get(cid), lineno)

    def on_collective_schedule(self, lineno, cid, text):
        """The collectives Inductor scheduled for a compile, in order (2.9+)."""
        value = self._json(text, lineno, "inductor_collective_schedule")
        for seq, op in enumerate(value if isinstance(value, list) else ()):
            self.parsed.add("collectives", {"graph_id": None, "compile_id": cid, "seq": seq, "line": lineno,
                                            "op": None if op is None else str(op), "source": "collective_schedule"})

    def on_runtime_estimates(self, lineno, cid, text):
        """Inductor's runtime estimate and output shapes of each scheduled op (2.9+, log_tlparse)."""
        value = self._json(text, lineno, "inductor_runtime_and_tensor_meta")
        ops = value.get("ops") if isinstance(value, dict) else None
        for seq, op in enumerate(ops if isinstance(ops, list) else ()):
            if isinstance(op, dict):
                runtime = op.get("estimated_runtime_ns")
                self.parsed.add("op_estimates", {
                    "compile_id": cid, "seq": seq, "name": None if op.get("name") is None else str(op["name"]),
                    "op_type": op.get("type") if isinstance(op.get("type"), str) else None,
                    "estimated_runtime_ns": float(runtime) if isinstance(runtime, (int, float))
                    and not isinstance(runtime, bool) else None,
                    "outputs": op.get("outputs"), "line": lineno,
                })

    def on_graph_execution(self, lineno, cid, text):
        """The order compiled graphs ran in (2.9+, under record_and_log_graph_execution_order)."""
        value = self._json(text, lineno, "graph_execution")
        order = value.get("graph_execution_order") if isinstance(value, dict) else None
        for seq, entry in enumerate(order if isinstance(order, list) else ()):
            run_cid = entry.get("compile_id") if isinstance(entry, dict) else entry
            self.parsed.add("graph_executions", {"seq": seq, "compile_id": normalise_torch_compile_id(str(run_cid))
                                                 if run_cid is not None else None})

    def on_torch_version(self, lineno, cid, text):
        value = self._json(text, lineno, "torch_version")
        if isinstance(value, dict):
            facts = self.parsed.facts
            if isinstance(value.get("pytorch_version"), str):
                facts["compiler_version"] = value["pytorch_version"]
            if isinstance(value.get("commit"), str):
                facts["compiler_commit"] = value["commit"]

    def on_graph_break(self, lineno, cid, text):
        graph_break_row(self.parsed, cid, text, self.frame_files.get(frame_key(cid)))

    def on_recompile(self, lineno, cid, text):
        recompile_rows(self.parsed, cid, text, self.frame_files.get(frame_key(cid)))

    def on_dynamo_error(self, lineno, cid, text):
        event = dynamo_error_event(cid, text, self.frame_files.get(frame_key(cid)))
        key = without_attempt(cid)
        if key in self.failed_compiles or key in self.pending_errors:
            self.parsed.counters["dynamo_error_of_a_reported_failure"] += 1
        else:
            self.pending_errors[key] = event

    def on_failure(self, event: dict | None) -> None:
        """A compile's metrics reported a failure (or none): store it once, with the frame its
        dynamo_error named when the metrics name none."""
        if event is None:
            return
        key = without_attempt(event["compile_id"])
        error = self.pending_errors.pop(key, None)
        if error is not None:
            self.parsed.counters["dynamo_error_of_a_reported_failure"] += 1
            if event["user_file"] is None:
                event["user_file"], event["user_line"] = error["user_file"], error["user_line"]
        self.failed_compiles.add(key)
        self.parsed.add("compile_events", event)

    def on_cpp_guards(self, lineno, meta, cid, data):
        guard_row(self.parsed, cid, *self._text_and_md5(data), is_json_list=False)

    def on_json_guards(self, lineno, meta, cid, data):
        guard_row(self.parsed, cid, *self._text_and_md5(data), is_json_list=True)

    def on_chromium(self, lineno, meta, cid, data):
        try:
            event = orjson.loads(data)
        except orjson.JSONDecodeError as e:
            self.parsed.problem(f"chromium_event payload is not JSON: {e}", lineno, "error")
            return
        if isinstance(event, dict):
            self.chromium.add(event, cid)
        else:
            self.parsed.counters["chromium_event_unusable"] += 1

    def on_post_grad_graph(self, lineno, cid, text):
        self.pending_ops.setdefault(cid, deque()).append((lineno, text))

    def on_post_grad_record(self, lineno, meta, cid, data):
        self.on_post_grad_graph(lineno, cid, data.decode("utf-8", "replace"))

    def on_output_code(self, lineno, meta, cid, data):
        parsed = self.parsed
        text = data.decode("utf-8", "replace")
        known = output_code.aot_graph_id(text[:200])
        if known in self.known_graphs and known not in parsed.facts["graph_compile_ids"]:
            self.output_codes += 1
            parsed.facts["graph_compile_ids"][known] = cid
            parsed.counters["output_code_in_debug_tree"] += 1
            self.latest_graph[cid] = known
            waiting = self.pending_ops.get(cid)
            if waiting:
                waiting.popleft()  # its ops come from the debug tree too
            return
        self._code_graph(output_code.parse_output_code(text), lineno, cid,
                         self.payload_md5 or hashlib.md5(data).hexdigest())

    def on_exported_program(self, lineno, meta, cid, data):
        """torch.export's program (with TORCH_DTRACE): a graph of its own, with its ops; no Inductor
        compile made it, so it has no kernel counts."""
        text = data.decode("utf-8", "replace")
        body = text.split("\nGraph signature:", 1)[0].split("\n")[1:]  # below `ExportedProgram:`
        graph = "\n".join(line[4:] if line.startswith("    ") else line for line in body)
        graph_id = f"export_{self.exports}"
        self.exports += 1
        ops = fx_graph.parse_fx_graph(graph)
        self._offset_problems(ops, lineno)
        for r in ops.rows.get("ops", []):
            r["graph_id"], r["stage"] = graph_id, "exported"
            self.parsed.add("ops", r)
        self.parsed.facts["graph_compile_ids"][graph_id] = cid
        self.parsed.add("graphs", {
            "graph_id": graph_id, "compile_id": cid, "phase": None, "aot_id": None, "folder": None,
            "pre_fusion_nodes": None, "post_fusion_nodes": None, "kernel_count": None, "extern_kernel_count": None,
            "compile_order": None, "source": "torch_trace", "output_code_hash": None, "partitions": None,
            "unknown_because": "a torch.export program: no Inductor compile, so no kernels or fusions to count",
        })

    def on_graph_dump(self, lineno, meta, cid, data):
        """AOTInductor's code: `inductor_aot_wrapper_code` then `inductor_aot_kernel_code` (2.7+), or
        one `inductor_aot_code` (2.4 to 2.6); the wrapper and kernels together are one graph, as the
        debug tree's output_code.cpp is."""
        name = meta.get("name") if isinstance(meta, dict) else None
        if name not in AOTI_CODE_NAMES:
            self.parsed.counters[f"graph_dump:{name}"] += 1
            return
        if AOTI_CODE in self.known_graphs:
            self.parsed.counters["aoti_code_in_debug_tree"] += 1
            return
        text = data.decode("utf-8", "replace")
        if name == "inductor_aot_wrapper_code":
            self.aoti_wrapper = (lineno, cid, text, self.payload_md5)
            return
        wrapper = self.aoti_wrapper if name == "inductor_aot_kernel_code" else None
        self.aoti_wrapper = None
        start, whole = (wrapper[0], wrapper[2] + "\n" + text) if wrapper else (lineno, text)
        self._code_graph(output_code.parse_aoti_code(whole), start, cid, hashlib.md5(whole.encode()).hexdigest())

    def _code_graph(self, sub: Parsed, lineno: int, cid, code_hash: str) -> None:
        """A graph (and its kernels, and the post-grad graph waiting for it) from a compile's code."""
        parsed = self.parsed
        order = self.output_codes
        self.output_codes += 1
        self._offset_problems(sub, lineno)
        aot_id, phase = sub.facts.get("aot_id"), sub.facts.get("phase")
        graph_id = f"{aot_id}_{phase}" if aot_id is not None else f"trace_{cid}_{order}"
        if graph_id in parsed.facts["graph_compile_ids"]:
            # AOT ids restart when a process resets Dynamo (tlparse's cache_hit_miss.log)
            parsed.counters["repeated_aot_id"] += 1
            graph_id = f"{graph_id}_{order}"
        kernels = sub.rows.get("kernels", [])
        for table, rows in sub.rows.items():
            for r in rows:
                r["graph_id"] = graph_id
            parsed.rows[table].extend(rows)
        parsed.add("graphs", {
            "graph_id": graph_id, "compile_id": cid, "phase": phase, "aot_id": aot_id, "folder": None,
            "pre_fusion_nodes": None, "post_fusion_nodes": None,
            "kernel_count": sum(1 for k in kernels if k.get("generated")),
            "extern_kernel_count": sum(1 for k in kernels if k.get("generated") is False),
            "compile_order": order, "source": "torch_trace", "output_code_hash": code_hash,
            "partitions": sub.facts.get("partitions"),
        })
        parsed.facts["graph_compile_ids"][graph_id] = cid
        if sub.facts.get("aoti"):
            parsed.facts.setdefault("aoti_graphs", []).append(graph_id)
        for fact in ("device", "backend", "benchmark_model"):
            if sub.facts.get(fact) and fact not in parsed.facts:
                parsed.facts[fact] = sub.facts[fact]
        parsed.counters.update(sub.counters)
        self.latest_graph[cid] = graph_id
        waiting = self.pending_ops.get(cid)
        if waiting:
            graph_line, graph_text = waiting.popleft()
            ops = fx_graph.parse_fx_graph(graph_text)
            self._offset_problems(ops, graph_line)
            for r in ops.rows.get("ops", []):
                # the trace's post-grad graph is the text after Inductor's FX passes
                r["graph_id"], r["stage"] = graph_id, "transformed"
                parsed.add("ops", r)

    def on_stack_traces(self, lineno, cid, text):
        graph_id = self._graph_for_provenance(cid, "inductor_provenance_tracking_kernel_stack_traces")
        value = self._json(text, lineno, "inductor_provenance_tracking_kernel_stack_traces")
        if graph_id is not None and isinstance(value, dict):
            stack_trace_rows(self.parsed, graph_id, value)

    def on_node_mappings(self, lineno, cid, text):
        graph_id = self._graph_for_provenance(cid, "inductor_provenance_tracking_node_mappings")
        if graph_id is None:
            graph_id = self._graph_without_code(cid)
        if graph_id is None or graph_id in self.known_graphs:
            return  # a debug-tree graph: its own mapping file says the same
        sub = provenance.parse_provenance(text)
        self._offset_problems(sub, lineno)
        for table, rows in sub.rows.items():
            for r in rows:
                r["graph_id"] = graph_id
            self.parsed.rows[table].extend(rows)
        self.parsed.counters.update(sub.counters)

    # -- helpers ---------------------------------------------------------------------------

    def _graph_without_code(self, cid) -> str | None:
        """A graph for what a log says of a compile whose output code it never logged (AOTInductor
        and provenance-only logs): its ops and lineage are kept, its kernel counts unknown (NULL).
        Not when a debug tree of the same process holds the graphs: it has them, code or not."""
        if self.known_graphs:
            return None
        graph_id = f"trace_{cid}_nocode" if cid is not None else "trace_nocode"
        if graph_id not in self.parsed.facts["graph_compile_ids"]:
            self.parsed.facts["graph_compile_ids"][graph_id] = cid
            self.parsed.add("graphs", {
                "graph_id": graph_id, "compile_id": cid, "phase": None, "aot_id": None, "folder": None,
                "pre_fusion_nodes": None, "post_fusion_nodes": None, "kernel_count": None,
                "extern_kernel_count": None, "compile_order": None, "source": "torch_trace", "output_code_hash": None,
            })
        return graph_id

    def _graph_for_provenance(self, cid, name):
        graph_id = self.latest_graph.get(cid)
        if graph_id is None:
            self.parsed.counters[f"{name}_without_output_code"] += 1
        return graph_id

    def _text_and_md5(self, data: bytes) -> tuple[str, str | None]:
        """The payload as text, and the md5 of its bytes (has_payload's check made it) where the
        text is those bytes: a guard tree is kept by that md5, and hashing 37 MB of trees again
        costs what the check did."""
        try:
            return data.decode("utf-8"), self.payload_md5
        except UnicodeDecodeError:
            return data.decode("utf-8", "replace"), None

    def _json(self, text, lineno, what):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError as e:
            self.parsed.problem(f"{what} payload is not JSON: {e}", lineno, "error")
            return None

    def _offset_problems(self, sub: Parsed, lineno: int) -> None:
        """Problems of a payload parser point at payload lines (or nowhere): make them file lines."""
        for p in sub.problems:
            p.line = lineno if p.line is None else p.line + lineno
            self.parsed.problems.append(p)

    def close(self) -> Parsed:
        parsed = self.parsed
        for event in self.pending_errors.values():  # errors of compiles whose metrics never came
            parsed.add("compile_events", event)
        self.pending_errors.clear()
        if self.aoti_wrapper is not None:  # a wrapper whose kernel file was never logged
            lineno, cid, text, md5 = self.aoti_wrapper
            self.aoti_wrapper = None
            self._code_graph(output_code.parse_aoti_code(text), lineno, cid, md5 or hashlib.md5(text.encode()).hexdigest())
        for kind, n in self.kinds.items():
            parsed.counters["records"] += n
            if kind in NAMED_KINDS:
                parsed.counters[f"kind:{kind}"] += n
                continue
            handling = handling_of(kind, None)
            parsed.counters[f"kind:{kind}" if handling != UNKNOWN else f"unknown_kind:{kind}"] += n
            parsed.add("trace_records", {"record_kind": kind, "name": None, "n": n, "handling": handling})
        for (kind, name), n in self.named.items():
            handling = handling_of(kind, name)
            if handling == UNKNOWN:
                parsed.counters[f"unknown_{kind}:{name}"] += n
            parsed.add("trace_records", {"record_kind": kind, "name": None if name is None else str(name), "n": n,
                                         "handling": handling})
        self.chromium.finish(parsed)
        for t in parsed.rows.get("timings", ()):
            if t["name"] == CUDAGRAPH_RECORD_SPAN and t["source"] == "chromium_event":
                parsed.add("cudagraph_events", {"compile_id": t["compile_id"], "kind": "record", "reason": None,
                                                "n": t["calls"], "source": "chromium_event"})
        unpaired = sum(len(q) for q in self.pending_ops.values())
        if unpaired:
            parsed.counters["post_grad_graph_without_output_code"] += unpaired
        for cid, waiting in self.pending_ops.items():
            graph_id = self._graph_without_code(cid) if waiting else None
            if graph_id is not None:
                graph_line, graph_text = waiting[-1]  # the graph Inductor got last for this compile
                ops = fx_graph.parse_fx_graph(graph_text)
                self._offset_problems(ops, graph_line)
                for r in ops.rows.get("ops", []):
                    r["graph_id"], r["stage"] = graph_id, "transformed"
                    parsed.add("ops", r)
        facts = parsed.facts
        unfinished = self.started - self.finished
        if unfinished:
            facts["unfinished_compiles"] = sorted(str(c) for c in unfinished)
        # compiles that finished with a graph for Inductor and no code from it: kernel-less graphs,
        # whose debug folders Inductor leaves empty
        coded = set(facts["graph_compile_ids"].values())
        codeless = [c for c in self.aot_compiles if c not in coded and without_attempt(c) in self.finished]
        if codeless:
            facts["codeless_compiles"] = codeless
        for e in parsed.rows.get("cache_events", ()):
            # compilation_metrics (2.11+) say which cache served a lookup: where only one did, that is it
            counts = self.cache_counts.get(without_attempt(e["compile_id"])) or self.cache_counts.get(e["compile_id"])
            if counts and e["cache"] in ("fx_graph", "aot_autograd") and e["outcome"] in ("hit", "miss"):
                served = [w for w in ("local", "remote") if counts.get((e["cache"], e["outcome"], w))]
                e["location"] = served[0] if len(served) == 1 else None
        states = facts["graph_cache_states"]
        for g in parsed.rows.get("graphs", ()):
            g["cache_state"] = states.get(g["graph_id"])
            if g.get("pre_fusion_nodes") is None and not g.get("unknown_because"):
                g["unknown_because"] = _unknown_because(g)
        if self.first_glog is not None:
            started = _started_at(self.first_glog, self.metrics_epoch)
            if started is not None:
                facts["started_at"] = started
            else:
                month, day, _ = self.first_glog
                facts["started_mmdd"] = f"{month:02d}{day:02d}"
        return parsed


def _unknown_because(graph: dict) -> str:
    """Why a graph the trace gave has no fusion counts (or kernel counts)."""
    if graph.get("cache_state") == "hit":
        return ("FX graph cache hit: Inductor loaded the compiled graph and did not schedule or fuse it, so "
                "its pre/post fusion nodes are unknown; its kernels come from the cached output code")
    if graph.get("kernel_count") is None:
        return "the log has no output code for this compile (AOTInductor or provenance-only): kernel counts unknown"
    return "no TORCH_COMPILE_DEBUG tree for this graph: the scheduler's IR, and so its fusion counts, are not in the log"


def _payload_bytes(blocks: list[bytes], crlf: bool, newlines: int) -> bytes:
    """The payload as has_payload hashes it: lines without their TAB, joined by b"\\n".
    `newlines`: the b"\\n" in the blocks joined; each is followed by a payload line's TAB.
    `crlf`: the file's line ends were converted to CRLF after writing, so drop the CRs."""
    joined = blocks[0] if len(blocks) == 1 else b"\n\t".join(blocks)
    # deleting every TAB is twice as fast, and right when it deleted only those that start lines:
    # told by the length, not by counting TABs first (a pass over every payload byte; the 67 GPU
    # traces' parse took 2.31 CPU s with it, 2.27 without)
    data = joined.translate(None, b"\t")
    if len(joined) - len(data) != newlines:
        data = joined.replace(b"\n\t", b"\n")
    if crlf:
        data = data.replace(b"\r\n", b"\n")
        if data[-1:] == b"\r":
            data = data[:-1]
    return data


def _started_at(first_glog: tuple, epoch: float | None) -> str | None:
    """ISO time of the first record. glog writes no year: take the year of compilation_metrics'
    start_time, moved by one when that puts the first record more than half a year away."""
    if epoch is None:
        return None
    month, day, clock = first_glog
    ref = datetime.fromtimestamp(epoch, timezone.utc).replace(tzinfo=None)
    for year in (ref.year, ref.year - 1, ref.year + 1):
        try:
            t = datetime.strptime(f"{year:04d}-{month:02d}-{day:02d} {clock}", "%Y-%m-%d %H:%M:%S.%f")
        except ValueError:
            continue
        if abs((t - ref).days) <= 183:
            return t.isoformat()
    return None


_AOT_GRAPH_KINDS = frozenset({"aot_forward_graph", "aot_inference_graph"})
_TENSOR_DEVICE = re.compile(r"device\(type='(\w+)'")
_HANDLERS = {
    "str": _TraceState.on_str,
    **{kind: (lambda state, lineno, meta, cid, data, kind=kind: state.on_shape(lineno, meta, cid, data, kind))
       for kind in SHAPE_KINDS},
    "describe_tensor": _TraceState.on_describe_tensor,
    "dynamo_start": _TraceState.on_dynamo_start,
    "compilation_metrics": _TraceState.on_metrics,
    "bwd_compilation_metrics": _TraceState.on_bwd_metrics,
    "compilation_metrics_runtime": _TraceState.on_runtime_metrics,
    "bwd_compilation_metrics_runtime": _TraceState.on_runtime_metrics,
    "artifact": _TraceState.on_artifact,
    "chromium_event": _TraceState.on_chromium,
    "dynamo_cpp_guards_str": _TraceState.on_cpp_guards,
    "dynamo_guards": _TraceState.on_json_guards,
    "inductor_output_code": _TraceState.on_output_code,
    "graph_dump": _TraceState.on_graph_dump,
    "exported_program": _TraceState.on_exported_program,
    "inductor_post_grad_graph": _TraceState.on_post_grad_record,
}
_ARTIFACTS = {
    "torch_version": _TraceState.on_torch_version,
    "dynamo_graph_break_reason": _TraceState.on_graph_break,
    "recompile_reasons": _TraceState.on_recompile,
    "dynamo_error": _TraceState.on_dynamo_error,
    "inductor_post_grad_graph": _TraceState.on_post_grad_graph,
    "after_post_grad_graph": _TraceState.on_post_grad_graph,  # its name in 2.8 and 2.9
    "inductor_provenance_tracking_kernel_stack_traces": _TraceState.on_stack_traces,
    "inductor_provenance_tracking_node_mappings": _TraceState.on_node_mappings,
    "triton_kernel_info": _TraceState.on_kernel_info,
    "inductor_collective_schedule": _TraceState.on_collective_schedule,
    "inductor_runtime_and_tensor_meta": _TraceState.on_runtime_estimates,
    "graph_execution": _TraceState.on_graph_execution,
}
