"""From any path to runs and their artifact files.

A run is one process's artifacts. The rules, in order:
- A folder with `manifest.json` is one run (or one run per process, when it holds the artifacts of
  several processes, e.g. one trace log per rank); every file below it belongs to it, unless a
  deeper folder has its own manifest.
- Elsewhere, each `torch_compile_debug/run_<time>-pid_<pid>` folder (or a folder of any name holding
  `torchinductor/<graph>/`: listing.debug_dir_of) and each TORCH_TRACE log is one process; a debug
  folder and a trace log with the same pid, started within minutes of each other, are the same
  process and so one run; a log that names a thread, not the pid (2.3, 2.4),
  joins the folder that holds the same output code (_join_by_code). Processes that share a folder (torchrun's ranks, the
  benchmark harness's process a model) are each a run rooted at its own trace log, and together
  one job.
- torch-spyre kernel folders (`sdsc_*.json`): the parent of an `inductor-spyre`,
  `inductor-spyre-cache` (the kernel cache, with its `failed/` compiles) or `execute` folder is one
  run with a graph per kernel folder; any other folder of sdsc files is a run.
- The benchmark harness's CSVs (and their JSON records) belong to the run they lie in or beside,
  when there is one; where a folder holds the artifacts of several processes (the harness runs
  each model in a process of its own), or none, its harness files are a run of their own, rooted
  at its first harness CSV: their rows name the models, which the `harness_links` view finds among
  the runs below that folder.
- Anything else is skipped and counted, never an error.

Which parser reads a file is told by `ingest/listing.py`. The rules work on a listing (`group`):
names, sizes, mtimes and a way to read a file's first bytes.
`discover` lists local paths; `ingest/remote.py` lists object storage and groups its objects by the
same rules.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePath

from inductor_warehouse.ingest.listing import (Artifact, Entry, Run, Skipped, debug_dir_of, entry, in_graph_folders,
                                               sniff)
from inductor_warehouse.ingest.rank_layout import jobs_of_rank_folders, place_job_torch_logs, place_torch_logs
from inductor_warehouse.ingest.sources import Head, classify
from inductor_warehouse.ingest.parsers import output_code, torch_trace, trace_graphs

DEBUG_RUN_RE = re.compile(r"^run_(\d{4})_(\d\d)_(\d\d)_(\d\d)_(\d\d)_(\d\d)_(\d+)-pid_(\d+)$")
RANK_FILE_RE = re.compile(r"rank_(\d+)")
# how much of a 2.3/2.4 log, and of a debug folder's output_code.py, is read to join them by their code
CODE_LOOK_BYTES = 64 << 20
# the process that wrote a debug folder or a trace log: (pid, (month, day, hour, minute) it started, rank)
ProcessKey = tuple[int, tuple[int, int, int, int], int | None]


@dataclass
class Discovery:
    runs: list[Run]
    skipped: Skipped  # reason -> count, and the files
    missing: list[str]  # paths given that do not exist


def discover(paths: Iterable[str | os.PathLike[str]]) -> Discovery:
    files: list[Path] = []
    missing: list[str] = []
    for p in paths:
        p = Path(p).absolute()
        if not p.exists():
            missing.append(str(p))
        elif p.is_file():
            files.append(p)
        else:
            for dirpath, dirnames, filenames in os.walk(p):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                files.extend(Path(dirpath, f) for f in sorted(filenames))
                if not filenames and not dirnames and in_graph_folders(Path(dirpath)):
                    files.append(Path(dirpath))  # an empty graph folder: the process died early
    runs, skipped = group(map(entry, sorted(set(files))), sniff)  # type: ignore[arg-type]
    return Discovery(runs, skipped, missing)


def group(entries: Iterable[Entry], head: Head,
          mapper: Callable[[Callable[[Entry], Artifact | None], Iterable[Entry]], Iterator[Artifact | None]] = map,
          ) -> tuple[list[Run], Skipped]:
    """Runs from a listing sorted by path. `head(path, n)` reads a file's first n bytes (decompressed),
    None when it cannot; `mapper` may classify the entries concurrently (a sniff of object storage
    is a request)."""
    entries = list(entries)
    skipped = Skipped()
    manifest_roots = {e.path.parent for e in entries if e.path.name == "manifest.json"}

    by_root: dict[PurePath | None, list[Artifact]] = {}
    nearest: dict[PurePath, PurePath | None] = {}  # folder -> its manifest folder: files share folders
    for e, art in zip(entries, mapper(lambda e: classify(e, head), entries), strict=True):
        if art is None:
            skipped.add("unrecognised file", e.path)
            continue
        folder = e.path.parent
        if folder not in nearest:
            nearest[folder] = _nearest(e.path, manifest_roots)
        by_root.setdefault(nearest[folder], []).append(art)

    runs: list[Run] = []
    for root, arts in by_root.items():
        if root is None:
            runs.extend(_runs_without_manifest(arts, skipped, head))
        else:
            runs.extend(_runs_of_manifest_folder(root, arts, skipped, head))
    runs.sort(key=lambda r: str(r.root))
    return runs, skipped


def _nearest(f: PurePath, roots: set[PurePath]) -> PurePath | None:
    """The deepest manifest folder above `f` (a walk up: testing every root is quadratic)."""
    for parent in f.parents:
        if parent in roots:
            return parent
    return None


def _process_key(a: Artifact) -> ProcessKey | None:
    """(pid, start time) of the process that wrote a debug folder or a trace log."""
    if a.kind == "torch_trace":
        if a.first_record is None:
            return None
        rank, month, day, hour, minute, pid = a.first_record
        if int(pid) > torch_trace.MAX_PID:
            return None  # a 2.3/2.4 thread id, not a pid: nothing to join a debug folder by
        return int(pid), (int(month), int(day), int(hour), int(minute)), int(rank) if rank else None
    for part in a.path.parts:
        m = DEBUG_RUN_RE.match(part)
        if m:
            mo, d, h, mi = (int(m.group(i)) for i in range(2, 6))
            return int(m.group(8)), (mo, d, h, mi), None
    return None


def _debug_run_dir(a: Artifact) -> Path | None:
    """The debug tree run a file belongs to: the `run_<time>-pid_<pid>` folder above it, else the
    folder its place in a debug tree names, whatever that folder is called (listing.debug_dir_of)."""
    for parent in a.path.parents:
        if DEBUG_RUN_RE.match(parent.name):
            return parent  # type: ignore[return-value]
    if a.kind == "torch_trace":
        return None  # a log is a process of its own, joined to a folder by pid or code
    return debug_dir_of(a.path)  # type: ignore[return-value]


def _runs_of_manifest_folder(root: PurePath, arts: list[Artifact], skipped: Skipped, head: Head) -> list[Run]:
    manifest = root / "manifest.json"
    logs = [a for a in arts if a.kind == "torch_trace"]
    # by folder: a debug run's files share a few
    debug_dirs = {d for a in {a.path.parent: a for a in arts}.values() if (d := _debug_run_dir(a))}
    if len(logs) <= 1 and len(debug_dirs) <= 1:
        run = Run(root, arts, manifest)
        if logs:
            key = _process_key(logs[0])
            run.pid, run.rank = (key[0], key[2]) if key else (None, None)
        return [run]
    # several processes under one manifest (one log per rank): one run each, sharing the manifest
    units = _split_by_process(arts)
    placed = {id(x) for u in units for x in u.artifacts}
    processes = list(units)
    # the processes' TORCH_LOGS (a launcher's one file, or its per-rank files): each its lines
    shared = place_torch_logs([a for a in arts if id(a) not in placed], processes if len(units) > 1 else [],
                              head, skipped)
    if len(units) > 1:
        units.extend(_harness_runs([a for a in shared if a.kind == "harness"], processes=list(units)))
    for u in units:
        u.manifest = manifest
        u.job, u.job_root = root.name, root
        u.base = root
        u.artifacts.extend(shared if len(units) == 1 else [a for a in shared if a.kind == "manifest"])
    if len(units) > 1:
        _tell_harness_kinds(processes, [a for a in shared if a.kind == "harness"])
    return units


# the kinds a file of which, alone, says enough of one process to be its run
LONE_RUNS = frozenset({"profiler", "torch_logs"})


def _runs_without_manifest(arts: list[Artifact], skipped: Skipped, head: Head | None = None) -> list[Run]:
    # torch-spyre kernel folders are runs too: a sidecar or profile beside one belongs to it
    units = _split_by_process(arts, head) + _spyre_runs([a for a in arts if a.kind == "spyre"])
    # a provenance sidecar with no run beside it (copied out on its own) is a run: what lies beside
    # it (a profile) belongs to it
    for a in arts:
        if a.kind == "spyre_provenance" and not any(a in u.artifacts or _unit_dir(u) in (a.path.parent, a.path.parent.parent)
                                                    for u in units):
            units.append(Run(a.path.parent, [a]))
    placed = {id(a) for u in units for a in u.artifacts}
    placed |= place_job_torch_logs([a for a in arts if id(a) not in placed], units, head, skipped)
    # loose companions (profile.json, torch_logs.txt, stderr): they belong to the one process
    # found beside them or above them; with several candidates they are skipped; with no process
    # in their folder or under it, a profile or a TORCH_LOGS capture is a run of its own, as a lone
    # trace log is (a file copied out of its run, or pasted from an issue); harness files are a run
    # of their own whenever they have no owner.
    unowned_harness, lone = [], []
    for a in arts:
        if id(a) in placed:
            continue
        if a.kind == "spyre":
            continue
        owners = [u for u in units if _unit_dir(u) in (a.path.parent, a.path.parent.parent)]
        if len(owners) == 1 and a.kind != "other":
            owners[0].artifacts.append(a)
        elif a.kind == "harness":
            unowned_harness.append(a)
        elif a.kind in LONE_RUNS and not any(_unit_dir(u).is_relative_to(a.path.parent) for u in units):
            # no process in its folder or under it (whose stderr it may be): its own run, and no
            # owner of the files beside it
            lone.append(Run(a.path, [a], rank=a.rank, root_is_log=True))
        else:
            skipped.add(f"{a.kind} file with no run beside it" if a.kind != "other" else "unrecognised file", a.path)
    _jobs_of_ranks([r for r in lone if r.rank is not None])  # a profile's rank: its distributedInfo
    _tell_harness_kinds(units, unowned_harness)
    units.extend(_harness_runs(unowned_harness, skipped, units))
    return units + lone


def _tell_harness_kinds(processes: list[Run], held_apart: list[Artifact]) -> None:
    """Each process learns the kinds of the harness CSVs held in a run of their own in its folder or
    above it (the harness's own loop writes one CSV for all its processes), the rows the view
    harness_links would link to it."""
    kinds: dict[PurePath, set[str]] = {}
    for a in held_apart:
        if a.harness_kind:
            kinds.setdefault(a.path.parent, set()).add(a.harness_kind)
    if not kinds:
        return
    for u in processes:
        u.job_harness_kinds = frozenset().union(*(kinds.get(f, ()) for f in (u.folder, *u.folder.parents)))


def _harness_runs(arts: list[Artifact], skipped: Skipped | None = None, processes: Iterable[Run] = ()) -> list[Run]:
    """The harness files of each folder as one run. A folder of several CSVs (a nightly's, a CI
    job's) is rooted at the folder, its source path; a lone CSV at itself (what a user ingesting one
    file named), as are a folder's CSVs where a process is rooted at the folder: two runs of one
    source path would replace each other. Beside the processes of a job (a folder several processes
    share), the run is one of that job."""
    processes = list(processes)
    by_folder: dict[PurePath, list[Artifact]] = {}
    for a in arts:
        by_folder.setdefault(a.path.parent, []).append(a)
    jobs = {u.job_root: u.job for u in processes if u.job_root is not None}
    taken = {u.root for u in processes}
    runs = []
    for folder, files in by_folder.items():
        csvs = sorted((a for a in files if a.path.name.endswith(".csv")), key=lambda a: a.path)
        if csvs:
            on_csv = folder in taken or len(csvs) == 1
            runs.append(Run(csvs[0].path if on_csv else folder, files, root_is_log=on_csv, job=jobs.get(folder),
                            job_root=folder if folder in jobs else None))
        elif skipped is not None:  # JSON records alone say nothing the warehouse keeps
            skipped.add("harness records with no CSV beside them", *(a.path for a in files))
    return runs


def _unit_dir(u: Run) -> Path:
    return u.folder


def _split_by_process(arts: list[Artifact], head: Head | None = None) -> list[Run]:  # noqa: C901 - a log split by process, one decision a line
    """One Run per process: debug-tree folders and trace logs, joined by pid and start time (where
    the log names no pid, by the code both hold: _join_by_code)."""
    debug: dict[Path, list[Artifact]] = {}
    for a in arts:
        d = _debug_run_dir(a)
        if d is not None:
            debug.setdefault(d, []).append(a)
    units: list[Run] = []
    debug_keys: dict[PurePath, ProcessKey | None] = {}
    for d, files in sorted(debug.items()):
        run = Run(d, files)
        key = _process_key(files[0])
        run.pid = key[0] if key else None
        debug_keys[d] = key
        units.append(run)
    rank_logs: list[Run] = []
    for log in (a for a in arts if a.kind == "torch_trace"):
        key = _process_key(log)
        match = None
        if key:
            for u in units:
                dk = debug_keys.get(u.root)
                if dk and dk[0] == key[0] and _close(dk[1], key[1]) and not any(
                    x.kind == "torch_trace" for x in u.artifacts
                ):
                    match = u
                    break
        if match is not None:
            match.artifacts.append(log)
            match.rank = key[2]  # type: ignore[index]
            # the run's folder is where both the debug tree and the log live
            match.root = type(match.root)(os.path.commonpath([match.root, log.path.parent]))
            continue
        run = Run(log.path, [log], pid=key[0] if key else None, rank=key[2] if key else None, root_is_log=True)
        if run.rank is None and (m := RANK_FILE_RE.search(log.path.name)):
            run.rank = int(m.group(1))  # older logs say the rank only in the file name
        units.append(run)
        if run.rank is not None or "rank" in log.path.name:
            rank_logs.append(run)
    if head is not None:
        for log_run in _join_by_code(units, debug_keys, head):
            units.remove(log_run)
            if log_run in rank_logs:
                rank_logs.remove(log_run)
    _jobs_of_ranks(rank_logs)
    _own_roots(units)
    jobs_of_rank_folders(units)
    return units


def _jobs_of_ranks(ranks: list[Run]) -> None:
    """Ranks rooted at their own files (trace logs, profiles) that share a folder are one job, the
    folder: torchrun's processes write their files side by side."""
    by_folder: dict[PurePath, list[Run]] = {}
    for run in ranks:
        by_folder.setdefault(run.root.parent, []).append(run)
    for folder, group in by_folder.items():
        if len(group) > 1:
            for run in group:
                run.job, run.job_root = folder.name, folder


def _join_by_code(units: list[Run], debug_keys: dict[PurePath, ProcessKey | None], head: Head) -> list[Run]:
    """A trace log whose records name a thread, not the pid (2.3, 2.4), joins the debug folder of the
    same process, found by the code both hold: Inductor writes each graph's code to the folder's
    output_code.py and to the log's `inductor_output_code` (trace_graphs.code_digests). Only a log that
    started within 30 minutes of a folder with no log, and whose code is in that folder alone, while
    that folder's code is in no other such log: processes of the same model (torchrun's ranks) write
    the same code, and are left apart. A folder whose name says no pid or time (renamed, or
    `config.trace.debug_dir`) is joined the same way by a log lying inside it. Returns the runs of
    the logs joined."""
    logs = [u for u in units if u.root_is_log and len(u.artifacts) == 1 and u.artifacts[0].first_record is not None]
    folders = [u for u in units if u.root in debug_keys and not any(a.kind == "torch_trace" for a in u.artifacts)]
    if not logs or not folders:
        return []
    folder_codes: dict[PurePath, set[str]] = {}
    pairs: list[tuple[Run, Run]] = []
    for log_run in logs:
        log = log_run.artifacts[0]
        month, day, hour, minute = (int(x) for x in log.first_record[1:5])  # type: ignore[index]
        thread_named = _process_key(log) is None
        near = [u for u in folders
                if ((dk := debug_keys[u.root]) and thread_named and _close(dk[1], (month, day, hour, minute)))
                or (dk is None and log.path.is_relative_to(u.root))]
        codes = trace_graphs.code_digests(head(log.path, CODE_LOOK_BYTES) or b"") if near else set()
        for u in near if codes else ():
            if u.root not in folder_codes:
                folder_codes[u.root] = {output_code.code_digest(text.decode("utf-8", "replace"))
                                        for a in u.artifacts if a.path.name == "output_code.py"
                                        and (text := head(a.path, CODE_LOOK_BYTES)) is not None}
            if codes & folder_codes[u.root]:
                pairs.append((log_run, u))
    joined = []
    for log_run, u in pairs:
        if [p[1] for p in pairs if p[0] is log_run] == [u] and [p[0] for p in pairs if p[1] is u] == [log_run]:
            log = log_run.artifacts[0]
            u.artifacts.append(log)
            u.rank = log_run.rank
            u.root = type(u.root)(os.path.commonpath([u.root, log.path.parent]))
            joined.append(log_run)
    return joined


def _own_roots(units: list[Run]) -> None:
    """Processes whose debug folder and log share a folder with another process's (torchrun: one
    `torch_compile_debug/` and one `trace/` for every rank; the benchmark harness: a process a
    model) would all be rooted at that folder, and so share a source path, and each would replace
    the one before: each is rooted at its own log instead, its files still named relative to the
    shared folder, and the processes of that folder are one job."""
    by_root: dict[PurePath, list[Run]] = {}
    for u in units:
        by_root.setdefault(u.root, []).append(u)
    for root, group in by_root.items():
        if len(group) < 2:
            continue
        for u in group:
            log = next((a for a in u.artifacts if a.kind == "torch_trace"), None)
            if log is not None and not u.root_is_log:
                u.base, u.root, u.root_is_log = u.base or root, log.path, True
                if u.job is None:
                    u.job, u.job_root = root.name, root


def _close(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    """Two (month, day, hour, minute) stamps within 30 minutes of each other."""
    try:
        ta = datetime(2000, a[0], a[1], a[2], a[3])
        tb = datetime(2000, b[0], b[1], b[2], b[3])
    except ValueError:
        return False
    return abs((ta - tb).total_seconds()) <= 1800


# the folders torch-spyre puts kernel folders in: Inductor's cache dir's `inductor-spyre`, the
# opt-in kernel cache's `inductor-spyre-cache` (its failed compiles under `failed/`), older `execute`
_SPYRE_KERNEL_PARENTS = ("inductor-spyre", "inductor-spyre-cache", "execute")


def _spyre_runs(arts: list[Artifact]) -> list[Run]:
    runs: dict[Path, Run] = {}
    for a in arts:
        kernel_dir = a.path.parent
        parent = kernel_dir.parent
        if parent.name == "failed" and parent.parent.name == "inductor-spyre-cache":
            parent = parent.parent
        root = parent.parent if parent.name in _SPYRE_KERNEL_PARENTS else kernel_dir
        runs.setdefault(root, Run(root)).artifacts.append(a)  # type: ignore[arg-type]
    return list(runs.values())
