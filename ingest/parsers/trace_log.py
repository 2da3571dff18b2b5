"""What every reader of a TORCH_TRACE log shares: the rows made so far (`parsed`), the record being
read (its line, its payload's md5) and how a payload is decoded. Each reader family keeps its own
state beside this (trace_shapes.Shapes, trace_events.Compiles, trace_graphs.Graphs,
trace_caches.Caches, trace_chromium.Spans), handed to its readers explicitly
(`trace_readers.READERS`)."""

from __future__ import annotations

import orjson

from inductor_warehouse.ingest.rows import Json, Parsed


class TraceLog:
    def __init__(self) -> None:
        self.parsed = Parsed()
        self.lineno = 0  # of the record being read
        self.payload_md5: str | None = None  # of the record being read, when it has has_payload

    def text_and_md5(self, data: bytes) -> tuple[str, str | None]:
        """The payload as text, and the md5 of its bytes (has_payload's check made it) where the
        text is those bytes: a guard tree is kept by that md5, and hashing it again would cost what
        the check did."""
        try:
            return data.decode("utf-8"), self.payload_md5
        except UnicodeDecodeError:
            return data.decode("utf-8", "replace"), None

    def json(self, text: bytes | str, lineno: int, what: str) -> Json:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError as e:
            self.parsed.problem(f"{what} payload is not JSON: {e}", lineno, "error")
            return None

    def offset_problems(self, sub: Parsed, lineno: int) -> None:
        """Problems of a payload parser point at payload lines (or nowhere): make them file lines."""
        for p in sub.problems:
            p.line = lineno if p.line is None else p.line + lineno
            self.parsed.problems.append(p)
