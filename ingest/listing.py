"""A file as a listing names it (`Entry`), and the artifact it is (`Artifact`): which parser reads
it, decided by its place and name, and for logs and JSON by a sniff of its first bytes, never by
a version string.
"""

from __future__ import annotations

import gzip
import re
import stat
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePath

from inductor_warehouse.ingest.parsers import glog, harness, profiler, torch_logs, torch_trace, triton_cache

GRAPH_FILE_KINDS = {
    "fx_graph_readable.py": "fx_graph",
    "fx_graph_transformed.py": "fx_graph",
    "fx_graph_runnable.py": "fx_graph_runnable",
    "ir_pre_fusion.txt": "fusion_ir",
    "ir_post_fusion.txt": "fusion_ir",
    "output_code.py": "output_code",
    "output_code.cpp": "output_code",  # AOTInductor
    "inductor_provenance_tracking_node_mappings.json": "provenance",
}
# JSON files a compiler writes beside its code, by name: AOTInductor's package, torch-spyre's sidecar
SIDECARS = {"kernel_information.json": "kernel_information", "spyre_provenance.json": "spyre_provenance"}
# Triton's cache folder: each compiled kernel's IR stages and binary, beside the metadata JSON
TRITON_STAGE_SUFFIXES = (".ttir", ".ttgir", ".llir", ".ptx", ".cubin", ".hsaco", ".amdgcn", ".source", ".spv")
SPYRE_FILE_RE = re.compile(r"^(sdsc(_\d+)?\.json|bundle\.mlir)$")
# Files known to carry nothing the warehouse reads: counted as skipped, never errors.
KNOWN_UNREAD = {"stdout.txt", "time.txt", "meta.json", "ground_truth.json", "debug.log"}
SNIFF_BYTES = 8192


@dataclass
class Artifact:
    path: Path  # absolute (for a run in object storage: /bucket/key, a PurePosixPath)
    kind: str  # the parser (source kind) that reads it, or "other"
    graph: str | None = None  # graph folder name, for debug-tree and spyre files
    size: int = 0
    mtime: float = 0.0
    # a trace log's first glog prefix (rank, month, day, hour, minute, pid), read with the sniff
    first_record: tuple | None = None
    # a benchmark harness CSV's kind (performance, accuracy, ...), told by its header in the sniff
    harness_kind: str | None = None


@dataclass(frozen=True)
class Entry:
    """A file as a listing names it."""
    path: PurePath
    size: int = 0
    mtime: float = 0.0
    # "file"; "folder": an empty graph folder (the process died early); "unreadable": not a
    # regular file (a FIFO or a device would block or never end a read), recorded, never opened
    kind: str = "file"


def entry(f: Path) -> Entry:
    """A local file (or an empty graph folder) as a listing names it: one stat a file."""
    try:
        st = f.stat()
    except OSError:
        # unreadable entries still reach the assembler, which records the problem
        return Entry(f, kind="unreadable")
    if stat.S_ISDIR(st.st_mode):
        return Entry(f, kind="folder")
    if not stat.S_ISREG(st.st_mode):
        return Entry(f, kind="unreadable")
    return Entry(f, st.st_size, st.st_mtime)


def classify(e: Entry, head: Callable[[PurePath], bytes | None]) -> Artifact | None:  # noqa: C901 - a file-kind dispatch, one branch a kind
    """The artifact a listed file is, or None for a file the warehouse does not read; `head(path)`
    reads its first SNIFF_BYTES (decompressed), None when it cannot."""
    f, name = e.path, e.path.name
    if e.kind == "folder":
        return Artifact(f, "empty_graph_folder", graph=name)
    if e.kind == "unreadable":
        return Artifact(f, "unreadable")
    art = Artifact(f, "other", size=e.size, mtime=e.mtime)
    parent = f.parent
    if name in SIDECARS:
        art.kind = SIDECARS[name]
    elif name in GRAPH_FILE_KINDS and parent.parent.name == "torchinductor":
        art.kind, art.graph = GRAPH_FILE_KINDS[name], parent.name
    elif parent.name == "torchinductor" and parent.parent.name.startswith("run_"):
        art.kind = "other"  # aot_model___N_debug.log: empty unless TORCH_LOGS raised levels
    elif name == "manifest.json":
        art.kind = "manifest"
    elif SPYRE_FILE_RE.match(name):
        art.kind, art.graph = "spyre", parent.name
    elif name in KNOWN_UNREAD:
        art.kind = "other"
    elif name.endswith(TRITON_STAGE_SUFFIXES) or name.startswith("__grp__"):
        return None  # Triton's IR and binaries beside its metadata: not read, not sniffed
    else:
        first = head(f)
        if first is None:
            # object storage refused the read: recorded as unreadable (an error of its run), not
            # skipped as unrecognised, which would drop a trace log without a word
            return Artifact(f, "unreadable")
        if torch_trace.is_torch_trace(first):
            art.kind = "torch_trace"
            art.first_record = glog.first_prefix(first)
        elif name.endswith(".json") and profiler.is_profiler_trace(first):
            art.kind = "profiler"
        elif name.endswith(".csv") and (kind := harness.harness_csv_kind(first)):
            art.kind, art.harness_kind = "harness", kind
        elif name.endswith(".json") and harness.is_harness_json(first):
            art.kind = "harness"
        elif name.endswith(".json") and triton_cache.is_triton_metadata(first):
            art.kind = "triton_cache"
        elif name.endswith((".txt", ".log", ".err")) and torch_logs.is_torch_logs(first):
            art.kind = "torch_logs"
        elif name in ("torch_logs.txt", "stderr.txt"):
            art.kind = "torch_logs"
        else:
            return None
    return art


def sniff(f: Path) -> bytes:
    """A local file's first SNIFF_BYTES, decompressed; nothing when it cannot be read."""
    try:
        if f.name.endswith(".gz"):
            with gzip.open(f, "rb") as fh:
                return fh.read(SNIFF_BYTES)
        with open(f, "rb") as fh:
            return fh.read(SNIFF_BYTES)
    except (OSError, EOFError, zlib.error):  # gzip.BadGzipFile is an OSError
        return b""


def gunzip_head(data: bytes) -> bytes:
    """The first SNIFF_BYTES of a gzip file of which only the first bytes were read."""
    try:
        return zlib.decompressobj(wbits=31).decompress(data, SNIFF_BYTES)
    except zlib.error:
        return b""
