"""TORCH_TRACE structured logs (`dedicated_log_torch_trace_*.log`), read as a stream of bytes.

Three stages: `trace_framing` cuts the bytes into records (glog prefix, JSON envelope, payload
checked against its md5); `trace_readers` names the reader of each record kind and artifact,
each in a module of its family (trace_metrics, trace_events, trace_graphs, trace_caches,
trace_chromium, trace_shapes, trace_guards, trace_schedule), which turn records into rows; and
`TraceState` here holds each reader family's state (handed to its readers) and settles the run at the end.

Payloads are decoded only for the kinds read. Records the record table (`ingest/parsers/trace_records.py`) does not
know are counted (`unknown_kind:<k>`, `unknown_artifact:<name>`), never errors, and each is kept whole (its line,
compile id, metadata and payload) as a trace_records row of its own, as is every key of an envelope beside its
kind that is no context; every run says which records it had (trace_records). `encoding` is not trusted: JSON is
tried, text kept.

Compile ids are written as the trace writes them (`0/0`, `1/0_1`, `!0/7/0`, `!0/-/-`): the
envelope's, attempt included (a graph compiled after a graph-break restart is `0/0_1`), for
graphs, kernels, ops, lineage, guards, graph breaks and recompiles; compilations, their timings,
restarts and failures take compilation_metrics' own (trace_metrics); chromium spans the one in
their args (trace_chromium).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from datetime import datetime, timezone
from functools import partial
from typing import Any, TypeAlias

import orjson

from inductor_warehouse.ingest.parsers.trace_records import NAMED_KINDS, UNKNOWN, handling_of, release_floor
from inductor_warehouse.ingest.parsers.compile_ids import frame_key, without_attempt
from inductor_warehouse.ingest.parsers.glog import MAX_PID
from inductor_warehouse.ingest.parsers.trace_caches import Caches, graph_cache_states, settle_all_lookups, settle_locations
from inductor_warehouse.ingest.parsers.trace_chromium import Spans, finish_chromium
from inductor_warehouse.ingest.parsers.trace_breaks import UNKNOWN_UNCOUNTED, unread_restarts, unseen_branches
from inductor_warehouse.ingest.parsers.trace_events import Compiles, event
from inductor_warehouse.ingest.parsers.trace_framing import CONTEXT_KEYS, Envelope, Framer, chunks_of_lines, is_torch_trace
from inductor_warehouse.ingest.parsers.trace_graphs import AOTI_CODE, Graphs, finish_graphs
from inductor_warehouse.ingest.parsers.trace_log import TraceLog
from inductor_warehouse.ingest.parsers.trace_readers import BoundReader, RecordKey, reader_of
from inductor_warehouse.ingest.parsers.trace_shapes import Shapes
from inductor_warehouse.ingest.rows import Json, Parsed, graph_row

__all__ = ["AOTI_CODE", "MAX_PID", "SINK_EVERY", "SINKABLE", "is_torch_trace", "parse_torch_trace",
           "parse_torch_trace_chunks", "settle_rank"]

# Tables whose rows may leave the parser before the log ends (see `sink`); graphs stay: they are
# few, and the graph ids of later records are looked up among them.
SINKABLE = ("compilations", "timings", "compile_events", "guards", "kernels", "ops", "lineage", "graph_texts",
            "trace_records")
SINK_EVERY = 16 << 20  # bytes of log between hand-overs of rows to `sink`
# the name torch gives a log in a distributed process (LazyTraceHandler, 2.3 to 2.14), tlparse's reading of it
LOG_RANK = re.compile(r"^dedicated_log_torch_trace_rank_(\d+)(?:_|\.log)")
# a graph no Inductor compiled: why it has no kernel or fusion counts
NOT_INDUCTOR = ("compiled by a backend other than Inductor (aot_eager, eager or a custom one; the log names none): it "
                "generates no kernels, so kernel and fusion counts do not apply")
# runs.backend of a run whose every graph another backend compiled: torch's logs name Inductor's code
# generator from its code, and the backend Dynamo called only in TORCH_LOGS' dynamo steps
OTHER_BACKEND = "not_inductor"
# sink({table: rows}): takes the rows made so far (rows are dicts: a table's row type says its keys)
Sink: TypeAlias = Callable[[dict[str, list[dict[str, Any]]]], None]


def parse_torch_trace(lines: Iterable[bytes]) -> Parsed:
    """Parse a TORCH_TRACE log given as raw lines (bytes, with or without their b"\\n")."""
    return parse_torch_trace_chunks(chunks_of_lines(lines))


def parse_torch_trace_chunks(chunks: Iterable[bytes], sink: Sink | None = None,
                             known_graphs: frozenset[str] = frozenset(),
                             known_codes: Mapping[str, tuple[str, ...]] | None = None,
                             empty_folders: Mapping[int, str] | None = None) -> Parsed:
    """Parse a TORCH_TRACE log given as consecutive pieces of its bytes, of any sizes (file reads).

    With `sink`, the rows made so far are handed to `sink({table: rows})` after every
    SINK_EVERY bytes of log and dropped here, so memory stays flat however long the log is;
    the returned Parsed then holds only the rows made since the last hand-over.
    `known_graphs`: graph ids already read from a debug tree of the same process; their output code,
    post-grad graph and node mappings repeat it, so they are not parsed again (their compile ids are
    still reported in facts["graph_compile_ids"]). `known_codes`: those graphs by the digest of their
    code (output_code.code_digest), for code that names no AOT ID. `empty_folders`: the graph id of
    the same debug tree's empty graph folder of each compile order."""
    state = TraceState(known_graphs, known_codes or {}, empty_folders or {})
    framer = Framer(state.parsed, state.record)
    since_sink = 0
    for chunk in chunks:
        if not chunk:
            continue
        framer.feed(chunk)
        since_sink += len(chunk)
        if sink is not None and since_sink >= SINK_EVERY:
            rows = state.parsed.rows
            sink({t: rows.pop(t) for t in SINKABLE if rows.get(t)})
            since_sink = 0
    framer.close()
    return state.close(framer.first_glog)


def settle_rank(parsed: Parsed, file_name: str) -> None:
    """The rank of a log whose file name and records disagree. torch writes both from
    dist.get_rank() (the name when it opens the log at its first record, each record's `rank`), so
    they differ only in a log renamed or put together by hand; tlparse's multi-rank view ranks logs
    by the name, and so does the warehouse (a warning names both)."""
    m = LOG_RANK.match(file_name)
    said = parsed.facts.get("rank")
    if m is not None and said is not None and int(m.group(1)) != said:
        parsed.problem(f"the records say rank {said} but the file name says rank {m.group(1)} (torch writes both "
                       f"from dist.get_rank(): a renamed or hand-made log); the run takes the file name's", None,
                       "warning")
        parsed.facts["rank"] = int(m.group(1))


class TraceState:
    """One log's readers' state, family by family (each handed to its readers, `trace_readers`), the
    records counted by kind, and the settling of the run at the log's end."""

    def __init__(self, known_graphs: frozenset[str] = frozenset(),
                 known_codes: Mapping[str, tuple[str, ...]] | None = None,
                 empty_folders: Mapping[int, str] | None = None):
        self.log = log = TraceLog()
        self.parsed = parsed = log.parsed
        parsed.facts["graph_compile_ids"] = {}
        parsed.facts["graph_cache_states"] = {}  # graph id -> its FX graph cache outcome
        self.shapes = Shapes(log)
        self.graphs = Graphs(log, known_graphs, known_codes or {}, empty_folders or {})
        self.caches = Caches(log, self.graphs.latest_graph)
        self.compiles = Compiles(log, self.shapes.strings, self.caches)
        self.spans = Spans(log)
        self.families: dict[type, object] = {TraceLog: log, Shapes: self.shapes, Graphs: self.graphs,
                                              Caches: self.caches, Compiles: self.compiles, Spans: self.spans}
        self.kinds: dict[str | None, int] = {}  # records by kind: counted into counters at close
        self.named: dict[RecordKey, int] = {}  # (kind, name) -> records, for the kinds whose metadata names them
        self.bound: dict[RecordKey, BoundReader | None] = {}  # (kind, name) -> its reader, given its family's state
        self.unknown: set[RecordKey] = set()  # the (kind, name)s the record table does not know: each record kept whole
        self.second_keys: dict[str, int] = {}  # envelope keys beside a record's kind that are no context: kept whole

    def record(self, lineno: int, kind: str | None, envelope: Envelope, cid: str | None, data: bytes, md5: str | None) -> None:
        """One whole record from the framer: counted, then read by its reader if it has one."""
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if cid is not None and "_" in cid:  # written after a restart of its compile's analysis
            self.compiles.restarts.note(cid)
        self.log.payload_md5 = md5
        meta = envelope.get(kind)  # type: ignore[arg-type]  # no kind (None): no such key, no metadata
        name = None
        if kind in NAMED_KINDS:
            name = meta.get("name") if isinstance(meta, dict) else None
            if isinstance(name, (list, dict)):  # no dict key: counted by its text, as trace_records names it
                name = str(name)
            named = (kind, name)
            self.named[named] = self.named.get(named, 0) + 1
        key = (kind, name)
        if key in self.bound:
            reader = self.bound[key]
        else:
            found = reader_of(kind, name)
            reader = self.bound[key] = None if found is None else partial(found[1], self.families[found[0]])
            if handling_of(kind, name) == UNKNOWN:
                self.unknown.add(key)
        if len(envelope.keys() - CONTEXT_KEYS) > 1:
            self._keep_second_keys(lineno, kind, envelope, cid)
        if key in self.unknown:
            self._keep_unknown(lineno, kind, name, meta, cid, data, envelope.get("has_payload"))
        if reader is not None:
            self.log.lineno = lineno
            reader(lineno, meta, cid, data)

    def _keep_unknown(self, lineno: int, kind: str | None, name: Hashable, meta: Json, cid: str | None,
                      data: bytes | None, has_payload: Json) -> None:
        """A record no release the record table covers writes, stored whole as a trace_records row of its own, so
        that a new release's new record can be looked at once its log is gone."""
        self.parsed.add("trace_records", {
            "record_kind": kind, "name": None if name is None else str(name), "n": 1, "handling": UNKNOWN,
            "line": lineno, "compile_id": cid, "metadata": None if meta is None else orjson.dumps(meta).decode(),
            # torch writes payloads as text; a byte that is not UTF-8 shows as U+FFFD, and its md5 then differs
            "payload": None if data is None else data.decode("utf-8", "replace"),
            "has_payload": has_payload if isinstance(has_payload, str) else None})

    def _keep_second_keys(self, lineno: int, kind: str | None, envelope: Envelope, cid: str | None) -> None:
        """Keys after the record's kind that are no context (torch writes one kind an envelope): each kept
        as a record of its own, unknown since no reader took it, its value as metadata."""
        for k in envelope:
            if k != kind and k not in CONTEXT_KEYS:
                self.second_keys[k] = self.second_keys.get(k, 0) + 1
                self._keep_unknown(lineno, k, None, envelope[k], cid, None, None)

    # -- the end of the log ----------------------------------------------------------------

    def close(self, first_glog: tuple[int, int, str] | None) -> Parsed:
        parsed, compiles = self.parsed, self.compiles
        for error in compiles.pending_errors.values():  # errors of compiles whose metrics never came
            parsed.add("compile_events", error)
        compiles.pending_errors.clear()
        for key, kind, why in unread_restarts(compiles.restarts, compiles.finished):
            parsed.add("compile_events", event(key, kind, why, None, None, compiles.frame_files.get(frame_key(key))))
        if (unseen := unseen_branches(compiles.restarts, compiles.started)) is not None:
            parsed.add("compile_events", event(None, UNKNOWN_UNCOUNTED, unseen, None, None))
        finish_graphs(self.graphs)
        self._count_records()
        finish_chromium(self.spans)
        facts = parsed.facts
        finished = compiles.finished | compiles.guarded
        unfinished = compiles.started - finished
        if unfinished:
            facts["unfinished_compiles"] = sorted(str(c) for c in unfinished)
        # compiles that finished with a graph for Inductor and no code from it, whose debug folders
        # Inductor leaves empty: kernel-less graphs, and (`loaded_compiles`) graphs with ops whose code
        # came from the FX graph cache in a release that logs no code on a hit
        coded = set(facts["graph_compile_ids"].values())
        codeless = [c for c in self.graphs.aot_compiles if c not in coded and without_attempt(c) in finished]
        if codeless:
            facts["codeless_compiles"] = codeless
            facts["loaded_compiles"] = [c for c in codeless if self.graphs.aot_compiles[c]]
        settle_all_lookups(self.caches)
        cache_events = parsed.rows.get("cache_events", ())
        self._graphs_of_other_backends(coded, cache_events)
        settle_locations(cache_events, self.caches.counts)
        states = facts["graph_cache_states"]
        states.update(graph_cache_states(cache_events))
        for g in parsed.rows.get("graphs", ()):
            g["cache_state"] = states.get(g["graph_id"])
            if g.get("pre_fusion_nodes") is None and not g.get("unknown_because"):
                g["unknown_because"] = _unknown_because(g)
        if first_glog is not None:
            started = _started_at(first_glog, compiles.epoch)
            if started is not None:
                facts["started_at"] = started
            else:
                month, day, _ = first_glog
                facts["started_mmdd"] = f"{month:02d}{day:02d}"
        return parsed

    def _graphs_of_other_backends(self, coded: set[str | None], cache_events: Iterable[dict[str, Any]]) -> None:
        """A graph a backend other than Inductor compiled (aot_eager, eager, a custom one): Dynamo handed
        it on, and nothing of Inductor's came of it (its timers, code, post-grad graph, a cache lookup).
        Its kernel counts do not apply, so they are NULL with the reason, never a confident 0."""
        inductor = {without_attempt(c) for c in coded} | {without_attempt(e.get("compile_id")) for e in cache_events}
        inductor |= {without_attempt(c) for c in self.graphs.pending_ops}
        others = [c for c, by_inductor in self.compiles.backend_graphs.items() if not by_inductor and c not in inductor]
        for cid in others:
            graph_id = f"trace_{cid}_not_inductor"
            self.parsed.facts["graph_compile_ids"][graph_id] = cid
            self.parsed.add("graphs", graph_row(
                graph_id, "torch_trace", compile_id=cid,
                unknown_because=NOT_INDUCTOR))
        facts = self.parsed.facts
        if others and len(others) == len(self.compiles.backend_graphs):
            facts.setdefault("backend", OTHER_BACKEND)
        for fact in ("codeless_compiles", "loaded_compiles"):  # no Inductor graph: no empty folder's, nor a cache hit
            if fact in facts and others:
                facts[fact] = [c for c in facts[fact] if without_attempt(c) not in others]

    def _count_records(self) -> None:
        """Records by kind (and name) into counters and trace_records, with what the record table says is done with them;
        the least release that writes them all (a fact: what the log can tell, reader_steps.read_torch_logs)."""
        parsed = self.parsed
        floor = release_floor([*((k, None) for k in self.kinds if k not in NAMED_KINDS), *self.named])
        if floor is not None:
            parsed.facts["release_floor"] = floor
        for kind, n in self.kinds.items():
            parsed.counters["records"] += n
            if kind in NAMED_KINDS:
                parsed.counters[f"kind:{kind}"] += n
                continue
            handling = handling_of(kind, None)
            parsed.counters[f"kind:{kind}" if handling != UNKNOWN else f"unknown_kind:{kind}"] += n
            if handling != UNKNOWN:  # an unknown kind's records are rows of their own (_keep_unknown)
                parsed.add("trace_records", {"record_kind": kind, "name": None, "n": n, "handling": handling})
        for kind, n in self.second_keys.items():
            parsed.counters[f"unknown_kind:{kind}"] += n
        for (kind, name), n in self.named.items():
            handling = handling_of(kind, name)
            if handling == UNKNOWN:
                parsed.counters[f"unknown_{kind}:{name}"] += n
            else:
                parsed.add("trace_records", {"record_kind": kind, "name": None if name is None else str(name), "n": n,
                                             "handling": handling})


def _unknown_because(graph: dict[str, Any]) -> str:
    """Why a graph the trace gave has no fusion counts (or kernel counts)."""
    if graph.get("cache_state") == "hit":
        return ("FX graph cache hit: Inductor loaded the compiled graph and did not schedule or fuse it, so "
                "its pre/post fusion nodes are unknown; its kernels come from the cached output code")
    if graph.get("kernel_count") is None:
        return "the log has no output code for this compile (AOTInductor or provenance-only): kernel counts unknown"
    return "no TORCH_COMPILE_DEBUG tree for this graph: the scheduler's IR, and so its fusion counts, are not in the log"


def _started_at(first_glog: tuple[int, int, str], epoch: float | None) -> str | None:
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
