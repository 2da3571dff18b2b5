"""One discovered run -> the rows of every table, ready for the loader.

Reads each artifact once (`ingest/reading.py`), hands its content to the parser of its source
kind (the debug tree's folders: `ingest/debug_tree.py`), tags rows with graph ids, joins what the
sources say of each other (`ingest/joins.py`), and derives the run row (`ingest/run_row.py`). No
database access: the loader (`ingest/load.py`) writes what this returns.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from inductor_warehouse.ingest import joins
from inductor_warehouse.ingest.debug_tree import debug_tree
from inductor_warehouse.ingest.discover import Run
from inductor_warehouse.ingest.listing import Artifact
from inductor_warehouse.ingest.parsers import harness, manifest, profiler, spyre, torch_logs, torch_trace, triton_cache
from inductor_warehouse.ingest.reading import Reader
from inductor_warehouse.ingest.rows import Parsed, graph_row
from inductor_warehouse.ingest.run_row import run_row

# the folders above a harness CSV whose names may say its suite, mode, dtype or device (a CI
# artifact's `rocm/`, a team's `nightly/huggingface/`)
HARNESS_FOLDERS = 3


@dataclass
class RunData:
    run: dict
    tables: dict[str, list[dict]]
    errors: list[dict]
    artifacts: list[dict]
    shared: dict[str, dict[str, str]]  # SHARED_TEXTS table -> {hash: text}: kept once however many runs have it
    counters: Counter = field(default_factory=Counter)
    bytes_read: int = 0


def assemble(run: Run, cli_model: str | None = None, cli_labels: dict | None = None, spill=None) -> RunData:  # noqa: C901 - one run's files joined in one pass
    """`spill({table: rows})`, when given, takes rows of long trace logs before the run is done
    (the loader writes them to disk), so a run's memory does not grow with its log."""
    t0 = time.perf_counter()
    reader = Reader(run)
    tables: dict[str, list[dict]] = defaultdict(list)
    counters: Counter = Counter()
    facts: dict = {}

    def take(parsed: Parsed, art: Artifact, graph_id: str | None = None, only: set | None = None):
        for table, rows in parsed.rows.items():
            if only is not None and table not in only:
                continue
            if graph_id is not None:
                for r in rows:
                    r.setdefault("graph_id", graph_id)
            tables[table].extend(rows)
        for p in parsed.problems:
            reader.error(art, p.message, p.line, p.severity)
        counters.update(parsed.counters)

    by_kind: dict[str, list[Artifact]] = defaultdict(list)
    for a in run.artifacts:
        by_kind[a.kind].append(a)

    man = Parsed()
    for a in by_kind.get("manifest", []):
        data = reader.read(a)
        if data is not None:
            man = manifest.parse_manifest(data)
            take(man, a)

    debug_graph_ids = debug_tree(run, by_kind, reader, take, facts)

    trace_facts: dict = {}
    shared: dict[str, dict[str, str]] = {}

    def trace_sink(rows: dict[str, list[dict]]) -> None:
        """Rows a long log hands over before it ends: their shared texts kept, the rest spilled."""
        _pop_shared(rows, shared)
        spill(rows)

    for a in by_kind.get("torch_trace", []):
        parsed = torch_trace.parse_torch_trace_chunks(reader.chunks(a), sink=trace_sink if spill else None,
                                                      known_graphs=frozenset(debug_graph_ids))
        take(parsed, a)
        for k, v in parsed.facts.items():
            trace_facts.setdefault(k, v)
    joins.trace_onto_graphs(tables["graphs"], trace_facts)
    joins.pre_grad_texts(tables, trace_facts)

    for a in by_kind.get("profiler", []):
        data = reader.read(a)
        if data is not None:
            parsed = profiler.parse_profiler(data)
            joins.attribute_to_graphs(parsed.rows.get("timings", []), tables["graphs"])
            take(parsed, a)
            for k, v in parsed.facts.items():
                facts.setdefault(k, v)

    has_trace = bool(by_kind.get("torch_trace"))
    for a in by_kind.get("torch_logs", []):
        text = reader.text(a)
        if text is None:
            continue
        parsed = torch_logs.parse_torch_logs(text.splitlines())
        # graph breaks and recompiles come from the trace log when there is one: it has them exactly
        take(parsed, a, only=None if not has_trace else set(parsed.rows) - {"compile_events"})

    joins.join_autotune(tables)
    _spyre(by_kind.get("spyre", []), reader, take, facts)
    joins.sidecars(by_kind, reader, take, tables, facts.get("aoti_graphs", []) + trace_facts.get("aoti_graphs", []),
                   counters, facts)
    _harness(run, by_kind.get("harness", []), reader, take, facts,
             {**(cli_labels or {}), **(man.facts.get("labels") or {})})
    for a in by_kind.get("triton_cache", []):
        if (data := reader.read(a)) is not None:
            take(triton_cache.parse_triton_metadata(data, a.path.parent.name), a)
    joins.choose_triton(tables.get("triton_kernels"))

    for a in by_kind.get("unreadable", []):
        reader.error(a, "not a readable regular file (a broken or looping link, no permission, a FIFO or device)")
    joins.empty_graph_folders(by_kind.get("empty_graph_folder", []), tables["graphs"], trace_facts if has_trace else None,
                              man.facts.get("labels") or {}, reader, take, counters)

    artifacts = []
    for a in run.artifacts:
        if a.kind not in ("unreadable", "empty_graph_folder") and run.rel(a) not in reader.hashes:
            reader.read(a)  # unparsed files still count towards the run's identity
        rel = run.rel(a)
        artifacts.append(
            {"path": rel, "kind": a.kind, "bytes": a.size, "content_hash": reader.hashes.get(rel), "mtime": a.mtime}
        )
    row = run_row(run, man.facts, cli_model, cli_labels, trace_facts, facts, reader.hashes, tables)
    row["ingest_seconds"] = time.perf_counter() - t0

    _pop_shared(tables, shared)
    return RunData(row, dict(tables), reader.errors, artifacts, shared, counters, reader.bytes_read)


def _pop_shared(tables, shared: dict[str, dict[str, str]]) -> None:
    """Texts that repeat from run to run leave their rows for a table of their own, keyed by a hash:
    kernel source (by its normalised hash, which the parser set), guard trees and graph texts (by
    their md5), which many runs share."""
    sources = shared.setdefault("kernel_sources", {})
    for k in tables.get("kernels", ()):
        src = k.pop("source", None)
        if src is not None and k.get("source_hash"):
            sources[k["source_hash"]] = src
    texts = shared.setdefault("graph_sources", {})
    for t in tables.get("graph_texts", ()):
        text = t.pop("text", None)
        if text is not None:
            t["text_hash"] = text_hash = hashlib.md5(text.encode()).hexdigest()
            texts[text_hash] = text
    trees = shared.setdefault("guard_trees", {})
    for g in tables.get("guards", ()):
        text = g.pop("text", None)
        if text is not None:
            g["tree_hash"] = tree_hash = g.get("tree_hash") or hashlib.md5(text.encode()).hexdigest()
            trees[tree_hash] = text


def _spyre(arts: list[Artifact], reader: Reader, take, facts: dict) -> None:
    """torch-spyre's kernel folders: a graph each."""
    folders: dict[str, list[Artifact]] = defaultdict(list)
    for a in arts:
        folders[str(a.path.parent)].append(a)
    for _, files in sorted(folders.items()):
        texts = {}
        for a in files:
            t = reader.text(a)
            if t is not None:
                texts[a.path.name] = t
        graph_id = files[0].path.parent.name
        parsed = spyre.parse_spyre_folder(texts)
        take(parsed, files[0], graph_id)
        kernels = parsed.rows.get("kernels", [])
        take(Parsed.one("graphs", graph_row(graph_id, "spyre", folder=graph_id, kernel_count=len(kernels),
                                            extern_kernel_count=0)), files[0])
        for k in ("device", "backend"):
            if parsed.facts.get(k):
                facts.setdefault(k, parsed.facts[k])


def _harness(run: Run, arts: list[Artifact], reader: Reader, take, facts: dict, labels: dict) -> None:
    """The harness's CSVs, each with what the JSON records beside it say of its models, the run's
    labels and the names of the folders it lies in (the nearest three)."""
    sidecars: dict[str, dict] = {}
    for a in arts:
        if a.path.name.endswith(".json") and (text := reader.text(a)) is not None:
            parsed = harness.parse_harness_json(text)
            take(parsed, a)
            sidecars[a.path.name[:-len(".json")]] = parsed.facts.get("models") or {}
    for a in arts:
        if not a.path.name.endswith(".csv") or (text := reader.text(a)) is None:
            continue
        parsed = harness.parse_harness_csv(text, a.path.name, sidecars.get(a.path.name[:-len(".csv")]), labels,
                                           tuple(p.name for p in list(a.path.parents)[:HARNESS_FOLDERS]))
        job = _spelled(run, a.path.parent)
        for row in parsed.rows.get("harness_results", ()):
            row["file"], row["job"] = run.rel(a), job
        take(parsed, a)
        if parsed.facts.get("suite"):
            facts.setdefault("harness_suite", parsed.facts["suite"])


def _spelled(run: Run, folder: Path) -> str:
    """A folder of the run's spelled as its source_path is (a path of this machine, or a URL of
    object storage): the harness's rows find the runs of their job under it."""
    top = run.folder
    source = run.source_path.rsplit("/", 1)[0] if run.root_is_log else run.source_path
    try:
        rel = folder.relative_to(top).as_posix()
    except ValueError:
        return str(folder)
    return source if rel == "." else f"{source}/{rel}"
