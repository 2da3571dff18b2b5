"""The register of artifact kinds: for each, its parser, how a file of it is recognised, its scope,
the tables it feeds and how its files become rows of a run. The listing (`classify`) and the
assembler (`ingest/assemble.py`) are loops over it; a new kind is a parser module and an entry here.

A kind is its parser module's name: the word in `artifacts.kind`, `ingest_errors.kind` and the docs.
A file is recognised by its place and name (`names`, `where`), or by its first bytes (`sniff`,
given the name without the `.gz` it may be compressed under, and the bytes decompressed), never by
a version string. Entries are read in the order listed, so a source that joins its rows
onto another's comes after it; kinds that share a reader (a debug tree's graph folder) are read
together, once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath
from types import ModuleType
from typing import TypedDict

from inductor_warehouse.ingest import joins
from inductor_warehouse.ingest.assembly import EMPTY_GRAPH_FOLDER, Assembly, kind_of
from inductor_warehouse.ingest.debug_tree import read_graph_folders
from inductor_warehouse.ingest.listing import (AOT_DEBUG_LOG, LONG_SNIFF_BYTES, PROFILE_SNIFF_BYTES, SNIFF_BYTES, Artifact, Entry,
                                               in_graph_folders, stored_name)
from inductor_warehouse.ingest.parsers import (fusion_ir, fx_graph, fx_graph_runnable, glog, harness, kernel_information,
                                               manifest, output_code, profiler, provenance, spyre, spyre_provenance,
                                               torch_logs, torch_trace, triton_cache)
from inductor_warehouse.ingest.reader_steps import (read_each, read_harness, read_manifest, read_profiles,
                                                    read_spyre_folders, read_torch_logs, read_traces,
                                                    read_triton_metadata)

# where a kind's files lie, and what one file of it is about
GRAPH = "graph folder"  # a compiled graph's folder (debug tree, Spyre kernel folder): its rows are the graph's
RUN = "run"  # the run as a whole (its log, its manifest, its profile)
SIDECAR = "sidecar"  # a file a compiler writes beside its code, joined onto the rows of that code
JOB = "job"  # a benchmark harness's results, for every run of its job

Step = Callable[[Assembly, list[Artifact]], None]
# a file's name and first bytes -> the Artifact fields it sets when it is of the kind, None when it
# is not, More when a longer head may tell
Sniff = Callable[[str, bytes], "Sniffed | More | None"]
# (path, size) -> the file's first `size` bytes, decompressed; None when it cannot be read
Head = Callable[[PurePath, int], "bytes | None"]


class Sniffed(TypedDict, total=False):
    """The Artifact fields a file's first bytes set."""
    first_record: glog.Prefix | None
    harness_kind: str
    rank: int


@dataclass(frozen=True)
class More:
    """A sniff's answer when the bytes end before they tell: a longer head may, up to the source's
    `further`; with none longer (the whole file was seen, or that far), `otherwise` stands."""
    otherwise: Sniffed | None = None


@dataclass(frozen=True)
class Source:
    parser: ModuleType  # its parser (ingest/parsers/<kind>.py): the kind is the module's name
    scope: str  # GRAPH, RUN, SIDECAR or JOB
    tables: frozenset[str]  # the tables its rows land in (tests/test_row_contract.py holds them)
    read: Step  # its files -> rows of the run: ctx.take(parser's Parsed, file)
    names: tuple[str, ...] = ()  # file names it is recognised by ...
    where: Callable[[PurePath], bool] | None = None  # ... where it lies (or, with no names, what its name is)
    sniff: Sniff | None = None  # else: recognised by its first bytes
    # how far a file of this name is read, at most, while its sniff answers More
    further: Callable[[str], int] | None = None

    @property
    def kind(self) -> str:
        return kind_of(self.parser)

    def named(self, path: PurePath) -> bool:
        if self.names and path.name not in self.names:
            return False
        return bool(self.names or self.where is not None) and (self.where is None or self.where(path))


def _in_graph_folder(path: PurePath) -> bool:
    return in_graph_folders(path.parent)


def _by_suffix(suffixes: tuple[str, ...], test: Callable[[bytes], object]) -> Sniff:
    return lambda name, head: {} if name.endswith(suffixes) and test(head) else None


def _trace_sniff(name: str, head: bytes) -> Sniffed | None:
    return {"first_record": glog.first_prefix(head)} if torch_trace.is_torch_trace(head) else None


def _harness_sniff(name: str, head: bytes) -> Sniffed | None:
    if name.endswith(".csv") and (kind := harness.harness_csv_kind(head, name)) is not None:
        return {"harness_kind": kind} if kind else {}
    return {} if name.endswith(".json") and harness.is_harness_json(head) else None


_TEXT_LOG = (".txt", ".log", ".err")


def _torch_logs_sniff(name: str, head: bytes) -> Sniffed | More | None:
    if name.endswith(_TEXT_LOG) and torch_logs.is_torch_logs(head):
        return {}
    if name in ("torch_logs.txt", "stderr.txt"):
        return {}  # a capture's stderr, by its name
    # a TORCH_LOGS capture may open with a model's printout, progress bars or warnings before
    # torch's first tagged line
    return More() if name.endswith(_TEXT_LOG) else None


def _profiler_sniff(name: str, head: bytes) -> Sniffed | More | None:
    """A Chrome trace by its top-level keys, and its rank where its `distributedInfo` (before its
    events, as Kineto writes it) names one. A file named as tensorboard_trace_handler names traces is
    one whatever its bytes say: one that cannot be read is an error of its run, never skipped."""
    if not name.endswith(".json"):
        return None
    found, header = profiler.trace_head(head)
    said: Sniffed = {}
    if isinstance(rank := profiler.distributed(header.get("distributedInfo")).get("rank"), int):
        said["rank"] = rank
    if found:
        return said
    named = name.endswith(profiler.TRACE_NAME)
    if found is None:
        return More(said if named or profiler.is_profiler_trace(head) else None)
    return said if named else None


_GRAPH_TABLES = frozenset({"graphs", "graph_texts"})

SOURCES: tuple[Source, ...] = (
    Source(manifest, RUN, frozenset(), read_manifest, names=("manifest.json",)),
    # the debug tree: a graph folder's files, read together
    Source(fx_graph, GRAPH, _GRAPH_TABLES | {"ops"}, read_graph_folders,
           names=("fx_graph_readable.py", "fx_graph_transformed.py"), where=_in_graph_folder),
    Source(fusion_ir, GRAPH, _GRAPH_TABLES | {"fusions", "layouts"}, read_graph_folders,
           names=("ir_pre_fusion.txt", "ir_post_fusion.txt"), where=_in_graph_folder),
    Source(output_code, GRAPH, _GRAPH_TABLES | {"kernels", "collectives", "lineage"}, read_graph_folders,
           names=("output_code.py", "output_code.cpp"), where=_in_graph_folder),  # .cpp: AOTInductor's
    Source(provenance, GRAPH, _GRAPH_TABLES | {"lineage"}, read_graph_folders,
           names=("inductor_provenance_tracking_node_mappings.json", *provenance.KERNEL_NODE_FILES),
           where=_in_graph_folder),
    Source(fx_graph_runnable, GRAPH, _GRAPH_TABLES, read_graph_folders, names=("fx_graph_runnable.py",),
           where=_in_graph_folder),
    Source(torch_trace, RUN, frozenset({
        "graphs", "graph_texts", "ops", "kernels", "fusions", "lineage", "collectives", "compilations", "timings",
        "compile_events", "guards", "cache_events", "autotune_choices", "shape_events", "cudagraph_events",
        "op_estimates", "graph_executions", "trace_records", "triton_kernels"}), read_traces, sniff=_trace_sniff),
    Source(profiler, RUN, frozenset({"timings"}), read_profiles, sniff=_profiler_sniff,
           further=lambda name: PROFILE_SNIFF_BYTES),
    Source(torch_logs, RUN, frozenset({"fusion_decisions", "compile_events", "autotune_choices", "triton_kernels",
                                       "cache_events"}), read_torch_logs, sniff=_torch_logs_sniff,
           further=lambda name: LONG_SNIFF_BYTES),
    Source(spyre, GRAPH, frozenset({"graphs", "kernels", "layouts", "spyre_handles"}), read_spyre_folders,
           where=lambda path: spyre.is_folder_file(path.name)),
    Source(kernel_information, SIDECAR, frozenset({"lineage"}), joins.read_kernel_information,
           names=("kernel_information.json",)),
    Source(spyre_provenance, SIDECAR, frozenset({"spyre_kernel_identities", "spyre_kernel_occurrences", "lineage",
                                                 "spyre_compiles", "spyre_handles"}), joins.read_spyre_provenance,
           names=("spyre_provenance.json",)),
    Source(harness, JOB, frozenset({"harness_results"}), read_harness, sniff=_harness_sniff),
    Source(triton_cache, SIDECAR, frozenset({"triton_kernels"}), read_triton_metadata,
           sniff=_by_suffix((".json",), triton_cache.is_triton_metadata)),
)
KINDS = tuple(s.kind for s in SOURCES)

# not a source's: a folder's own logs, files known to carry nothing the warehouse reads (counted as
# skipped, never errors), and Triton's IR stages and binaries beside its metadata (not even sniffed)
KNOWN_UNREAD = {"stdout.txt", "time.txt", "meta.json", "ground_truth.json", "debug.log"}
TRITON_STAGE_SUFFIXES = (".ttir", ".ttgir", ".llir", ".ptx", ".cubin", ".hsaco", ".amdgcn", ".source", ".spv")
OTHER = "other"  # listed (it counts towards a run's identity), parsed by none
UNREADABLE = "unreadable"  # not a readable regular file: an error of its run


def classify(e: Entry, head: Head) -> Artifact | None:
    """The artifact a listed file is, or None for a file the warehouse does not read; `head(path, n)`
    reads its first n bytes (decompressed), None when it cannot."""
    f, name, sources = e.path, e.path.name, SOURCES
    if e.kind == "folder":
        return Artifact(f, EMPTY_GRAPH_FOLDER, graph=name)
    if e.kind == "unreadable":
        return Artifact(f, UNREADABLE)
    for source in sources:
        if source.named(f):
            return Artifact(f, source.kind, graph=f.parent.name if source.scope == GRAPH else None, size=e.size,
                            mtime=e.mtime)
    if (in_graph_folders(f) and (f.parent.parent.name.startswith("run_") or AOT_DEBUG_LOG.match(name))
            or name in KNOWN_UNREAD):
        return Artifact(f, OTHER, size=e.size, mtime=e.mtime)  # aot_model___N_debug.log: empty unless TORCH_LOGS raised levels
    if name.endswith(TRITON_STAGE_SUFFIXES) or name.startswith("__grp__"):
        return None
    return _sniffed(e, head)


def _sniffed(e: Entry, head: Head) -> Artifact | None:
    """The artifact a file's first bytes say it is: its first SNIFF_BYTES, then, for a source whose
    sniff answers More, heads four times longer each, up to its `further`; sources are asked in the
    register's order."""
    f, name = e.path, stored_name(e.path.name)
    first = head(f, SNIFF_BYTES)
    if first is None:
        # object storage refused the read: recorded as unreadable (an error of its run), not
        # skipped as unrecognised, which would drop a trace log without a word
        return Artifact(f, UNREADABLE)
    heads = {SNIFF_BYTES: first}
    for source in SOURCES:
        if source.sniff is None:
            continue
        size, data = SNIFF_BYTES, first
        said = source.sniff(name, data)
        while isinstance(said, More):
            reach = source.further(name) if source.further is not None else 0
            if len(data) < size or size >= reach:
                said = said.otherwise  # the whole file was seen, or as far as this source looks
                break
            size = min(max(size * 4, LONG_SNIFF_BYTES), reach)
            longer = heads[size] if size in heads else head(f, size)
            if longer is None or len(longer) <= len(data):
                said = said.otherwise  # a damaged file's (gzip) stream ends early
                break
            heads[size], data = longer, longer
            said = source.sniff(name, data)
        if said is not None:
            return Artifact(f, source.kind, size=e.size, mtime=e.mtime, **said)
    return None


def kind_named(name: str) -> str | None:
    """The kind of a graph folder's file of this name (for a missing file's error)."""
    return next((s.kind for s in SOURCES if name in s.names), None)


def read_all(ctx: Assembly) -> None:
    """Every source's files into the run's rows, in the register's order; kinds that share a reader
    are read together, at the place of the first."""
    readers: dict[Step, list[str]] = defaultdict(list)
    for s in SOURCES:
        readers[s.read].append(s.kind)
    for read, kinds in readers.items():
        read(ctx, [a for kind in kinds for a in ctx.of(kind)])


__all__ = ["EMPTY_GRAPH_FOLDER", "GRAPH", "JOB", "KINDS", "OTHER", "RUN", "SIDECAR", "SOURCES", "UNREADABLE", "Source",
           "classify", "kind_named", "kind_of", "read_all", "read_each", "torch_trace"]
