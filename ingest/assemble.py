"""One discovered run -> the rows of every table, ready for the loader.

Reads each artifact once (`ingest/reading.py`), hands its content to the parser of its source
kind, in the order of the register of sources (`ingest/sources.py`: each kind's reader, which also
joins what the sources say of each other), records what the listing found unreadable or empty, and
derives the run row (`ingest/run_row.py`). No database access: the loader (`ingest/load.py`)
writes what this returns.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from inductor_warehouse.ingest import joins, sources
from inductor_warehouse.ingest.assembly import Assembly
from inductor_warehouse.ingest.listing import Artifact, Run
from inductor_warehouse.ingest.reading import Reader
from inductor_warehouse.ingest.parsers.manifest import Label
from inductor_warehouse.ingest.rows import ArtifactRow, IngestErrorRow, Row, RunRow
from inductor_warehouse.ingest.run_row import run_row

@dataclass
class RunData:
    run: RunRow
    tables: dict[str, list[Row]]
    errors: list[IngestErrorRow]
    artifacts: list[ArtifactRow]
    shared: dict[str, dict[str, str]]  # SHARED_TEXTS table -> {hash: text}: kept once however many runs have it
    counters: Counter[str] = field(default_factory=Counter)
    bytes_read: int = 0
    fed: set[tuple[str, str]] = field(default_factory=set)  # (source kind, table): where rows came from


def assemble(run: Run, cli_model: str | None = None, cli_labels: Mapping[str, Label] | None = None,
             spill: Callable[[dict[str, list[Row]]], None] | None = None) -> RunData:
    """`spill({table: rows})`, when given, takes rows of long trace logs before the run is done
    (the loader writes them to disk), so a run's memory does not grow with its log."""
    t0 = time.perf_counter()
    reader = Reader(run)
    by_kind: dict[str, list[Artifact]] = defaultdict(list)
    for a in run.artifacts:
        by_kind[a.kind].append(a)
    ctx = Assembly(run, reader, dict(by_kind), kind_named=sources.kind_named, cli_labels=cli_labels or {}, spill=spill)
    sources.read_all(ctx)

    for a in ctx.of(sources.UNREADABLE):
        reader.error(a, "not a readable regular file (a broken or looping link, no permission, a FIFO or device)")
    has_trace = bool(ctx.of(sources.kind_of(sources.torch_trace)))
    joins.empty_graph_folders(ctx.of(sources.EMPTY_GRAPH_FOLDER), ctx.tables["graphs"], ctx.trace if has_trace else None,
                              ctx.manifest.get("labels") or {}, reader, ctx.take, ctx.counters)

    artifacts: list[ArtifactRow] = []
    for a in run.artifacts:
        if a.kind not in (sources.UNREADABLE, sources.EMPTY_GRAPH_FOLDER) and run.rel(a) not in reader.hashes:
            reader.read(a)  # unparsed files still count towards the run's identity
        rel = run.rel(a)
        artifacts.append(
            {"path": rel, "kind": a.kind, "bytes": a.size, "content_hash": reader.hashes.get(rel), "mtime": a.mtime}
        )
    row = run_row(run, ctx.manifest, cli_model, cli_labels, ctx.trace, ctx.facts, reader.hashes, ctx.tables)
    row["ingest_seconds"] = time.perf_counter() - t0

    ctx.keep_shared(ctx.tables)
    return RunData(row, dict(ctx.tables), reader.errors, artifacts, ctx.shared, ctx.counters, reader.bytes_read,
                   ctx.fed)
