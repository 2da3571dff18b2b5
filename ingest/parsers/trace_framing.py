"""TORCH_TRACE framing: a log's bytes cut into records, each handed on whole to the record readers.

A record is one glog header line whose message is a JSON envelope, followed by its payload
lines, each starting with one TAB:

    V1122 00:09:40.916000 18849 torch/_dynamo/guards.py:5400] {"artifact": {...}, "frame_id": 0, ..., "has_payload": "<md5>"}
    \t0/0: tensor 'x' rank mismatch. expected 2, actual 3

Only one record's payload (and one read) is held at a time, so memory stays flat as logs grow.
`has_payload` (md5 of the payload lines without their TAB, joined by "\\n") is checked for every
record; a mismatch is a warning and the record is still used. A bad envelope is an error and its
payload lines are skipped. The record's kind is the envelope's first key that is not context.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from typing import TypeAlias

import orjson

from inductor_warehouse.ingest.parsers.compile_ids import compile_id_of
from inductor_warehouse.ingest.parsers.glog import GLOG, MAX_PID, PREFIX
from inductor_warehouse.ingest.rows import Json, Parsed

_SNIFF = re.compile(PREFIX.encode() + rb"\{")
CONTEXT_KEYS = frozenset({
    "frame_id", "frame_compile_id", "attempt", "compiled_autograd_id", "rank", "has_payload",
    "subgraph_name", "stack", "severity", "timestamp", "pathname", "thread",
})
# a record starts at every line that is not a payload line (those start with a TAB)
_RECORD_START = re.compile(rb"\n(?=[^\t])")
_NL, _TAB = ord("\n"), ord("\t")
_RECORD_FIRST_BYTES = frozenset(b"[VIWEC")  # what a glog line starts with: never a blank line
_LINES_PER_CHUNK_BYTES = 1 << 20
_MAX_REPEATED_PROBLEMS = 100  # per kind of problem; a file of garbage gives 100 errors, then a count

# a record's envelope: its kind's metadata and its context, JSON
Envelope: TypeAlias = dict[str, Json]
# emit(line number, kind, envelope, compile id, payload bytes, payload md5 or None), once a record
Emit: TypeAlias = Callable[[int, str | None, Envelope, str | None, bytes, str | None], None]
# a record's header: (line number, kind, envelope, compile id)
Header: TypeAlias = tuple[int, str | None, Envelope, str | None]
# the envelope's frame_id, frame_compile_id, attempt and compiled_autograd_id, as written (text
# where one is no dict key: Framer.start)
_IdKey: TypeAlias = tuple[Json, Json, Json, Json]


def is_torch_trace(head: bytes) -> bool:
    """True when the first non-blank line of `head` is a glog line whose message is a JSON object."""
    for line in head.lstrip(b"\xef\xbb\xbf").split(b"\n", 8)[:8]:
        if line.strip():
            return _SNIFF.match(line) is not None
    return False


def chunks_of_lines(lines: Iterable[bytes]) -> Iterable[bytes]:
    """Raw lines (with or without their b"\\n") joined into pieces of about a megabyte."""
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


class Framer:
    """Takes a log as consecutive pieces of its bytes, of any sizes, and emits each record once it is whole.

    Records are cut out of the bytes where a line does not start with a TAB, so no Python code
    runs per payload line: a log has ten times more payload lines than records."""

    def __init__(self, parsed: Parsed, emit: Emit):
        self.parsed = parsed
        self.emit = emit
        self.held: list[bytes] = []  # bytes after the last record start seen: a record that may go on
        self.nbytes = 0
        self.lineno = 0  # lines scanned so far
        self.compile_ids: dict[_IdKey, str | None] = {}
        self.first_glog: tuple[int, int, str] | None = None  # (month, day, time) of the first record
        self.crlf = False
        self.problem_counts: dict[str, int] = {}
        self.header: Header | None = None  # of the open record
        self.payload: list[bytes] | None = None  # the open record's payload lines, in blocks (see segment)
        self.payload_newlines = 0  # b"\n" inside the open record's blocks: each starts a payload line
        self.skipping = False  # payload lines of a record whose header was bad

    def feed(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.nbytes += len(chunk)
        held = self.held
        starts_record = _RECORD_START.search(chunk) is not None or (
            held and held[-1][-1:] == b"\n" and chunk[:1] != b"\t")
        held.append(chunk)
        if starts_record:
            buf = b"".join(held)
            self.held = [buf[self.scan(buf):]]

    def close(self) -> None:
        """The end of the log: emit its last record, and count its lines and bytes."""
        buf = b"".join(self.held)
        self.held = []
        done = self.scan(buf)
        if done < len(buf):
            self.segment(buf, done, len(buf))
        self.flush()
        counters = self.parsed.counters
        counters["lines"] += self.lineno
        counters["bytes"] += self.nbytes

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
            self.parsed.counters["skipped_payload_lines"] += block.count(b"\n") + 1
        else:
            for i in range(block.count(b"\n") + 1):
                self.repeated_problem("line_problems", "payload line without a record header", lineno + i, "error")

    def record_line(self, line: bytes, lineno: int) -> None:
        parsed = self.parsed
        m = GLOG.match(line)
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

    def start(self, lineno: int, m: re.Match[bytes], envelope: Envelope) -> Header:
        """The record's header: its line, kind, envelope and compile id; the run's pid and rank from the first."""
        facts = self.parsed.facts
        if self.first_glog is None:
            self.first_glog = (int(m.group("month")), int(m.group("day")), m.group("time").decode())
            self.crlf = m.string.rstrip(b"\n").endswith(b"\r")
            process = int(m.group("process"))
            facts["pid" if process <= MAX_PID else "thread_id"] = process
        if "rank" not in facts:
            rank = envelope.get("rank")
            if isinstance(rank, int) and not isinstance(rank, bool):
                facts["rank"] = rank
            elif m.group("rank") is not None:
                facts["rank"] = int(m.group("rank"))
        for kind in envelope:  # the first key that is not context: a loop, not next() of a generator
            if kind not in CONTEXT_KEYS:
                break
        else:
            kind = None
        key = (envelope.get("frame_id"), envelope.get("frame_compile_id"), envelope.get("attempt"),
               envelope.get("compiled_autograd_id"))
        try:
            cid = self.compile_ids.get(key, "")
        except TypeError:  # an id that is not a JSON scalar
            key = tuple(None if v is None else str(v) for v in key)  # type: ignore[assignment]
            cid = self.compile_ids.get(key, "")
        if cid == "":
            cid = self.compile_ids[key] = compile_id_of(*key)
        return lineno, kind, envelope, cid

    def flush(self) -> None:
        """Emit the open record, if any, with its payload checked against has_payload."""
        if self.header is None:
            return
        lineno, kind, envelope, cid = self.header
        payload = self.payload
        self.header = self.payload = None
        counters = self.parsed.counters
        data = _payload_bytes(payload, self.crlf, self.payload_newlines + len(payload) - 1) if payload else b""
        expected = envelope.get("has_payload")
        md5 = None
        if expected is not None:
            md5 = hashlib.md5(data).hexdigest()
            if md5 == expected:
                counters["md5_verified"] += 1
            else:
                counters["md5_mismatch"] += 1
                self.repeated_problem(
                    "md5_mismatch", f"has_payload md5 mismatch on a {kind} record (record kept)", lineno, "warning"
                )
        elif payload:
            counters["payload_without_md5"] += 1
        self.emit(lineno, kind, envelope, cid, data, md5)

    def repeated_problem(self, what: str, message: str, lineno: int, severity: str) -> None:
        """A problem that can recur on every line of a damaged file: the first ones are
        reported, the rest only counted."""
        seen = self.problem_counts[what] = self.problem_counts.get(what, 0) + 1
        if seen <= _MAX_REPEATED_PROBLEMS:
            self.parsed.problem(message, lineno, severity)
        else:
            self.parsed.counters[f"{what}_not_reported"] += 1


def _payload_bytes(blocks: list[bytes], crlf: bool, newlines: int) -> bytes:
    """The payload as has_payload hashes it: lines without their TAB, joined by b"\\n".
    `newlines`: the b"\\n" in the blocks joined; each is followed by a payload line's TAB.
    `crlf`: the file's line ends were converted to CRLF after writing, so drop the CRs."""
    joined = blocks[0] if len(blocks) == 1 else b"\n\t".join(blocks)
    # deleting every TAB is the fast way, and right when it deleted only those that start lines,
    # which the length tells without a pass that counts TABs first
    data = joined.translate(None, b"\t")
    if len(joined) - len(data) != newlines:
        data = joined.replace(b"\n\t", b"\n")
    if crlf:
        data = data.replace(b"\r\n", b"\n")
        if data[-1:] == b"\r":
            data = data[:-1]
    return data
