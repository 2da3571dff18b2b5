"""Which process wrote each line of a TORCH_LOGS file several processes wrote into.

torch's log formatter starts a line with `[rank<N>]:` once the process group is up (the global
rank), and its glog prefix names the pid; torchrun's `--tee` adds `[<role><local rank>]:` before
everything a process prints, warnings and tracebacks included. A line that names no process (a
traceback's next line, a warning without tee) is its previous line's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from inductor_warehouse.ingest.parsers import glog

# torchrun's tee tags (`[default0]:`), then torch's own `[rank0]:`, then the glog prefix's pid
_TEE = re.compile(r"^((?:\[(?!rank\d)[A-Za-z_][\w-]*?\d+\]:)+)")
_RANK = re.compile(r"^\[rank(\d+)\]:")
_PID = re.compile(r"^(?:\[rank\d+\]:)?[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} +(\d+) ")

Owner = tuple[int | None, int | None]  # (rank, pid) a line names, either may be unknown


def _split(line: str) -> tuple[str | None, str, int | None, int | None]:
    """(tee tag, the line without it, rank, pid) of a line."""
    tee = None
    if m := _TEE.match(line):
        tee, line = m.group(1), line[m.end():]
    rank = int(m.group(1)) if (m := _RANK.match(line)) else None
    pid = int(m.group(1)) if (m := _PID.match(line)) else None
    if pid is not None and pid > glog.MAX_PID:
        pid = None  # a 2.3/2.4 thread id names no process
    return tee, line, rank, pid


def line_owners(lines: Iterable[str]) -> tuple[set[int], set[int]]:
    """The pids and the ranks the lines name."""
    pids: set[int] = set()
    ranks: set[int] = set()
    for line in lines:
        _, _, rank, pid = _split(line)
        if pid is not None:
            pids.add(pid)
        if rank is not None:
            ranks.add(rank)
    return pids, ranks


def lines_of(lines: Iterable[str], rank: int | None, pid: int | None) -> list[str]:
    """The lines the process of `rank` and `pid` wrote, without torchrun's tee tags: a line is its
    by its pid where both are known, else by its rank prefix; a tee tag seen on one of its lines
    claims the tag's other lines; a line naming nothing follows the line before it."""
    split = [_split(line) for line in lines]

    def mine(r: int | None, p: int | None) -> bool | None:
        if p is not None and pid is not None:
            return p == pid
        if r is not None and rank is not None:
            return r == rank
        return None

    tags: dict[str, bool] = {}
    for tee, _, r, p in split:
        if tee is not None and tee not in tags and (said := mine(r, p)) is not None:
            tags[tee] = said
    kept: list[str] = []
    keep = False
    for tee, line, r, p in split:
        said = mine(r, p)
        if said is None and tee is not None:
            said = tags.get(tee, False)  # a tag none of whose lines names this process
        keep = keep if said is None else said
        if keep:
            kept.append(line)
    return kept
