"""A file as a listing names it (`Entry`), the artifact it is (`Artifact`: which source kind reads
it, told by the register of sources, `ingest/sources.py`), and a run with its artifacts (`Run`).
"""

from __future__ import annotations

import gzip
import re
import stat
import zlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath

from inductor_warehouse.ingest.parsers.glog import Prefix

SNIFF_BYTES = 8192
# how far a text log is read when its first SNIFF_BYTES say nothing: a TORCH_LOGS capture may open
# with a model's printout, progress bars or warnings before torch's first tagged line
LONG_SNIFF_BYTES = 1 << 18
# how far a JSON object is read for a profiler trace's top-level keys: a harness may write an object of
# its own (its run's metadata) before the trace's events; bounded, so that a large JSON file of another
# kind is never read whole
PROFILE_SNIFF_BYTES = 1 << 22


def in_graph_folders(path: PurePath) -> bool:
    """Whether `path` stands where Inductor puts a compile's graph folders: right in a debug tree's
    `torchinductor/` (debug.py: one `<model>__<aot id>_<phase>_<n>.<counter>` folder a graph)."""
    return path.parent.name == "torchinductor"


# what Inductor writes right in `torchinductor/` beside the graph folders (debug.py's AOT log)
AOT_DEBUG_LOG = re.compile(r"^aot_.*_debug\.log$")


def debug_dir_of(path: PurePath) -> PurePath | None:
    """The debug tree's run folder a path lies in by its place alone: the folder holding
    `torchinductor/<graph>/` (its files, an empty graph folder, the AOT log beside them) or
    `torchdynamo/debug.log`. Inductor writes there whatever the folder is called
    (`config.trace.debug_dir`, or a `run_<time>-pid_<pid>` folder its owner renamed)."""
    if path.name == "debug.log" and path.parent.name == "torchdynamo":
        return path.parent.parent
    if in_graph_folders(path):  # a graph folder, or a file beside the graph folders
        return path.parent.parent
    if in_graph_folders(path.parent):
        return path.parent.parent.parent
    return None


@dataclass
class Artifact:
    path: PurePath  # absolute (for a run in object storage: /bucket/key, a PurePosixPath)
    kind: str  # the parser (source kind) that reads it, or "other"
    graph: str | None = None  # graph folder name, for debug-tree and spyre files
    size: int = 0
    mtime: float = 0.0
    # a trace log's first glog prefix (rank, month, day, hour, minute, pid), read with the sniff
    first_record: Prefix | None = None
    # a benchmark harness CSV's kind (performance, accuracy, ...), told by its header in the sniff
    harness_kind: str | None = None
    # a profiler trace's rank (its distributedInfo), read with the sniff
    rank: int | None = None
    # (rank, pid) of the process whose lines of a TORCH_LOGS file several processes wrote are this
    # run's; None: the whole file is
    process: tuple[int | None, int | None] | None = None


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


def sniff(f: Path, size: int = SNIFF_BYTES) -> bytes:
    """A local file's first `size` bytes, decompressed; nothing when it cannot be read."""
    try:
        if f.name.endswith(".gz"):
            with gzip.open(f, "rb") as fh:
                return fh.read(size)
        with open(f, "rb") as fh:
            return fh.read(size)
    except (OSError, EOFError, zlib.error):  # gzip.BadGzipFile is an OSError
        return b""


def gunzip_head(data: bytes, size: int = SNIFF_BYTES) -> bytes:
    """The first `size` bytes of a gzip file of which only the first bytes were read."""
    try:
        return zlib.decompressobj(wbits=31).decompress(data, size)
    except zlib.error:
        return b""


def stored_name(name: str) -> str:
    """A file's name without the `.gz` it was compressed under: what tells its format."""
    return name.removesuffix(".gz")


class Skipped(Counter[str]):
    """The files discovery does not read: how many for each reason (a Counter, as summaries count
    them) and which, in listing order, so that a user can be told which files and why."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.paths: dict[str, list[str]] = {}

    def add(self, reason: str, *paths: PurePath | str) -> None:
        self[reason] += len(paths)
        self.paths.setdefault(reason, []).extend(map(str, paths))

    def absorb(self, other: Counter[str]) -> None:
        """Another listing's skipped files added to these."""
        self.update(other)
        for reason, paths in getattr(other, "paths", {}).items():
            self.paths.setdefault(reason, []).extend(paths)

    def forget(self, reason: str, paths: Iterable[PurePath | str]) -> None:
        """Files counted under `reason` that are read after all (an archive, read member by member)."""
        gone = set(map(str, paths))
        kept = [p for p in self.paths.get(reason, []) if p not in gone]
        self[reason] -= len(self.paths.get(reason, [])) - len(kept)
        self.paths[reason] = kept
        if self[reason] <= 0:
            del self[reason]
            self.paths.pop(reason, None)

    def renamed(self, name: Callable[[str], str]) -> None:
        """Each path as the user knows it (an object's s3:// URL rather than its pure path)."""
        self.paths = {reason: [name(p) for p in paths] for reason, paths in self.paths.items()}


@dataclass
class Run:
    root: PurePath  # the run's folder (or the trace log itself, for a lone log)
    artifacts: list[Artifact] = field(default_factory=list)
    manifest: PurePath | None = None
    pid: int | None = None
    rank: int | None = None
    # when no manifest says otherwise: the job a rank belongs to (the folder holding the rank logs)
    job: str | None = None
    # the folder holding the job's ranks: what tells two jobs of the same name apart
    job_root: PurePath | None = None
    # the folder artifact paths are relative to, when it is not the root's (one process of a
    # manifest folder holding several: its root is its log, its files lie anywhere in the folder)
    base: PurePath | None = None
    # the root is a trace log, not a folder: said here, as a listing of object storage has no
    # folders to ask
    root_is_log: bool = False
    # where the run lies when not on this machine's disk (an s3:// URL); its source_path
    source: str | None = None
    # the kinds of the benchmark harness CSVs held in a run of their own in its folder or above (a
    # process of the harness's own loop): what tells an accuracy process from a performance one
    job_harness_kinds: frozenset[str] = frozenset()

    @property
    def folder(self) -> Path:
        return self.root.parent if self.root_is_log else self.root  # type: ignore[return-value]

    @property
    def source_path(self) -> str:
        return self.source or str(self.root)

    def rel(self, a: Artifact) -> str:
        return a.path.relative_to(self.base or self.folder).as_posix()


def under(folder: Path, path: PurePath) -> Path:
    """An absolute path of a run elsewhere (`/bucket/key`, `/archive.zip/member`) below `folder`."""
    return folder.joinpath(*path.parts[1:])


def relocated(run: Run, folder: Path) -> Run:
    """The run with every path of it below `folder`: its copy on this machine's disk."""
    def move(p: PurePath | None) -> Path | None:
        return None if p is None else under(folder, p)

    return replace(run, root=under(folder, run.root), base=move(run.base), manifest=move(run.manifest),
                   artifacts=[replace(a, path=under(folder, a.path)) for a in run.artifacts])
