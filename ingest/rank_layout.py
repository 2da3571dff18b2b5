"""The ranks of one multi-process job, however its files are laid out.

- Per-rank folders: a launcher script or a framework that gives each rank a folder of its own
  (`job/rank<N>/`, `job/rank_<N>/`) writes the same artifacts there that torchrun's ranks write side
  by side; sibling rank folders are one job, the folder above them, and each process keeps the rank
  its trace names (the folder's number only where no trace does).
- torchrun's `--log-dir`: torch.distributed.elastic writes each local rank's redirected streams to
  `<log_dir>/<run_id>_<suffix>/attempt_<k>/<local_rank>/{stdout,stderr}.log` (DefaultLogsSpecs.reify:
  `clogdir = os.path.join(attempt_log_dir, str(local_rank))`). A file there is that process's
  TORCH_LOGS output and joins its run: by the pid its glog lines name, else by the `[rank<N>]:` prefix
  torch's log formatter adds once the process group is up, else by the local rank folder.
- A TORCH_LOGS file several processes wrote into (`iwh capture -- torchrun`'s torch_logs.txt, a
  console copy with torchrun's `--tee` tags `[default<N>]:`) is read once per process, each run
  keeping the lines its pid or rank prefix names (torch_logs_ranks.lines_of).
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import PurePath

from inductor_warehouse.ingest.listing import Artifact, Run, Skipped
from inductor_warehouse.ingest.parsers.torch_logs_ranks import line_owners
from inductor_warehouse.ingest.sources import Head

RANK_DIR_RE = re.compile(r"^rank[_-]?(\d+)$")
TORCHRUN_STREAM = ("stdout.log", "stderr.log")
ATTEMPT_RE = re.compile(r"^attempt_\d+$")
# how much of a TORCH_LOGS file is read to learn which processes wrote it
OWNER_LOOK_BYTES = 1 << 20


def rank_folder(u: Run) -> tuple[PurePath, int] | None:
    """The `rank<N>` folder a process's files lie in: its own folder, or the one above a `trace/` or
    `torch_compile_debug/` inside it."""
    folder: PurePath = u.folder
    for f in (folder, folder.parent, folder.parent.parent):
        if m := RANK_DIR_RE.match(f.name):
            return f, int(m.group(1))
    return None


def jobs_of_rank_folders(units: list[Run]) -> None:
    """Processes in sibling `rank<N>` folders are the ranks of one job, the folder holding them."""
    by_parent: dict[PurePath, list[tuple[Run, PurePath, int]]] = {}
    for u in units:
        if u.job is None and (found := rank_folder(u)):
            by_parent.setdefault(found[0].parent, []).append((u, *found))
    for parent, group in by_parent.items():
        if len({folder for _, folder, _ in group}) < 2:
            continue  # one rank folder alone says nothing of a job
        for u, _, n in group:
            u.job, u.job_root = parent.name, parent
            if u.rank is None:
                u.rank = n


def torchrun_local_rank(a: Artifact) -> tuple[PurePath, int] | None:
    """(the folder holding the `--log-dir`, local rank) of a file torchrun redirected a rank's
    stream to; None for any other file."""
    p = a.path
    if p.name not in TORCHRUN_STREAM or not p.parent.name.isdigit() or len(p.parents) < 5:
        return None
    if not ATTEMPT_RE.match(p.parent.parent.name):
        return None
    return p.parents[4], int(p.parent.name)


def _take(u: Run, a: Artifact) -> None:
    """The run takes a file lying outside its folder: its paths are named from a folder above both."""
    base: PurePath = u.base or u.folder
    if not a.path.is_relative_to(base):
        u.base = type(base)(os.path.commonpath([base, a.path.parent]))
    u.artifacts.append(a)


def place_torch_logs(arts: list[Artifact], units: list[Run], head: Head | None, skipped: Skipped) -> list[Artifact]:
    """Gives each TORCH_LOGS file of `arts` written by processes of `units` to its run: a torchrun
    `--log-dir` stream file to the one process that wrote it, a file several processes wrote to each
    of them, with the lines its own. A file whose lines name no process of `units` is skipped, with the
    reason. Returns the files of `arts` left for the caller."""
    left = []
    for a in arts:
        if a.kind != "torch_logs" or not units:
            left.append(a)
            continue
        stream = torchrun_local_rank(a)
        if stream is not None:
            candidates = [u for u in units if u.folder.is_relative_to(stream[0])]
            if not candidates:
                left.append(a)
                continue
        else:
            candidates = units
        text = head(a.path, OWNER_LOOK_BYTES) if head is not None else None
        pids, ranks = line_owners((text or b"").decode("utf-8", "replace").splitlines())
        named = [u for u in candidates if (u.pid is not None and u.pid in pids)
                 or (not pids & {c.pid for c in candidates} and u.rank is not None and u.rank in ranks)]
        if stream is not None:
            if len(named) != 1:  # no line names a process: the folder's local rank does
                named = [u for u in candidates if u.rank == stream[1]] if not named else []
            if len(named) == 1:
                _take(named[0], a)
            else:
                skipped.add("torchrun log of no single rank of the job", a.path)
        elif len(units) == 1:
            left.append(a)
        elif named:
            # a process that started later may write its first line past what was read: every
            # process that can be told by its lines gets its own
            for u in candidates:
                if u.pid is not None or u.rank is not None:
                    u.artifacts.append(replace(a, process=(u.rank, u.pid)))
        else:
            skipped.add("TORCH_LOGS file of several processes whose lines name none of them", a.path)
    return left


def place_job_torch_logs(arts: list[Artifact], units: list[Run], head: Head | None, skipped: Skipped) -> set[int]:
    """Of files found outside any manifest folder, the TORCH_LOGS the processes of a job wrote
    (torchrun's `--log-dir` files, one file in the job's folder) placed as place_torch_logs does;
    returns the ids of the files placed or skipped."""
    done = set()
    for a in arts:
        if a.kind != "torch_logs":
            continue
        job = [u for u in units if u.job_root is not None and u.job_root == a.path.parent]
        if torchrun_local_rank(a) or len(job) > 1:
            place_torch_logs([a], units if torchrun_local_rank(a) else job, head, skipped)
            done.add(id(a))
    return done
