"""What the sources' readers share while one run is assembled (`ingest/assemble.py`): its files by
kind, the rows made so far, what each source learned of the run, and `take`, the one way a parser's
rows join the run's."""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType

from inductor_warehouse.ingest.listing import Artifact, Run
from inductor_warehouse.ingest.reading import Reader
from inductor_warehouse.ingest.parsers.manifest import Label
from inductor_warehouse.ingest.rows import Facts, Parsed, Row

# the kind of a graph folder left empty: by a killed process, a cache hit or a graph with no code
EMPTY_GRAPH_FOLDER = "empty_graph_folder"


def kind_of(parser: ModuleType) -> str:
    """A source kind: its parser module's name."""
    return parser.__name__.rpartition(".")[2]


@dataclass
class Assembly:
    run: Run
    reader: Reader
    by_kind: dict[str, list[Artifact]]
    # the source kind a file of this name is (the register's: sources.kind_named), None for none
    kind_named: Callable[[str], str | None] = lambda name: None
    cli_labels: Mapping[str, Label] = field(default_factory=dict)
    # `spill({table: rows})`: takes a long log's rows before the run is done (the loader writes them to disk)
    spill: Callable[[dict[str, list[Row]]], None] | None = None
    tables: defaultdict[str, list[Row]] = field(default_factory=lambda: defaultdict(list))
    counters: Counter[str] = field(default_factory=Counter)
    facts: Facts = field(default_factory=dict)  # what the run's files say of the run (device, backend, ...)
    manifest: Facts = field(default_factory=dict)  # the manifest's facts (model, labels)
    trace: Facts = field(default_factory=dict)  # the trace logs' facts
    debug_graphs: frozenset[str] = frozenset()  # graph ids read from a debug tree
    # output_code.code_digest of each debug-tree graph code naming no AOT ID (2.3) -> its graph ids, in compile order
    debug_codes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    shared: dict[str, dict[str, str]] = field(default_factory=dict)  # SHARED_TEXTS table -> {hash: text}
    fed: set[tuple[str, str]] = field(default_factory=set)  # (source kind, table) pairs rows came by

    def take(self, parsed: Parsed, art: Artifact, graph_id: str | None = None, only: set[str] | None = None) -> None:
        """A parser's rows into the run's (tagged with `graph_id` where they have none; only the
        tables `only` names, when given), its problems as errors of `art`, its counters counted."""
        for table, rows in parsed.rows.items():
            if only is not None and table not in only:
                continue
            if graph_id is not None:
                for r in rows:
                    r.setdefault("graph_id", graph_id)
            self.tables[table].extend(rows)
            if rows:
                self.fed.add((art.kind, table))
        for p in parsed.problems:
            self.reader.error(art, p.message, p.line, p.severity)
        self.counters.update(parsed.counters)

    def of(self, kind: str) -> list[Artifact]:
        return self.by_kind.get(kind, [])

    def keep_shared(self, tables: Mapping[str, list[Row]]) -> None:
        """Texts that repeat from run to run leave their rows for a table of their own, keyed by a
        hash: kernel source (by its normalised hash, which the parser set), guard trees and graph
        texts (by their md5), which many runs share. Of a run's kernel texts normalising alike, the
        least is kept, as the writer keeps the least of all runs' (schema/ddl.py LEAST_TEXTS)."""
        sources = self.shared.setdefault("kernel_sources", {})
        for k in tables.get("kernels", ()):
            src = k.pop("source", None)
            if src is not None and (h := k.get("source_hash")):
                kept = sources.get(h)
                if kept is None or src < kept:
                    sources[h] = src
        texts = self.shared.setdefault("graph_sources", {})
        for t in tables.get("graph_texts", ()):
            text = t.pop("text", None)
            if text is not None:
                t["text_hash"] = text_hash = hashlib.md5(text.encode()).hexdigest()
                texts[text_hash] = text
        trees = self.shared.setdefault("guard_trees", {})
        for g in tables.get("guards", ()):
            text = g.pop("text", None)
            if text is not None:
                g["tree_hash"] = tree_hash = g.get("tree_hash") or hashlib.md5(text.encode()).hexdigest()
                trees[tree_hash] = text
