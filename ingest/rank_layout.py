"""The ranks of one multi-process job, however its files are laid out.

- Per-rank folders: a launcher script or a framework that gives each rank a folder of its own
  (`job/rank<N>/`, `job/rank_<N>/`) writes the same artifacts there that torchrun's ranks write side
  by side; sibling rank folders are one job, the folder above them, and each process keeps the rank
  its trace names (the folder's number only where no trace does).
"""

from __future__ import annotations

import re
from pathlib import PurePath

from inductor_warehouse.ingest.listing import Run

RANK_DIR_RE = re.compile(r"^rank[_-]?(\d+)$")


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
    by_parent: dict[PurePath, list[tuple[Run, int]]] = {}
    for u in units:
        if u.job is None and (found := rank_folder(u)):
            by_parent.setdefault(found[0].parent, []).append((u, found[1]))
    for parent, group in by_parent.items():
        if len({rank_folder(u)[0] for u, _ in group}) < 2:  # type: ignore[index]
            continue  # one rank folder alone says nothing of a job
        for u, n in group:
            u.job, u.job_root = parent.name, parent
            if u.rank is None:
                u.rank = n
