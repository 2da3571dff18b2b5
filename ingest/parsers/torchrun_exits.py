"""torchrun's word on how each rank's process ended, from its stderr (what `iwh capture -- torchrun`
tees into torch_logs.txt).

When a worker fails, torch.distributed.elastic raises ChildFailedError, whose message lists every
failed rank (errors/__init__.py's _FAILURE_FORMAT_TEMPLATE, the same since 1.9):

    [0]:
      time      : 2026-11-28_02:07:23
      host      : localhost
      rank      : 2 (local_rank: 2)
      exitcode  : -9 (pid: 3632)

and the agent logs `failed (exitcode: -9) local_rank: 2 (pid: 3632) of binary: ...` first
(multiprocessing/api.py). A negative exit code is the signal that killed the rank. The manifest's
exit code is torchrun's own (1 when any rank failed), so a rank's fate is only here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypedDict

_RANK = re.compile(r"^\s*rank\s*:\s*(\d+) \(local_rank: (\d+)\)\s*$")
_EXITCODE = re.compile(r"^\s*exitcode\s*:\s*(-?\d+) \(pid: (\d+)\)\s*$")


class RankExit(TypedDict):
    exit_code: int
    pid: int
    local_rank: int


def rank_exits(lines: Iterable[str]) -> dict[int, RankExit]:
    """Each failed rank's exit code and pid, by global rank, from ChildFailedError's summary; empty
    when the text holds none (every rank ended 0, or this is no torchrun output)."""
    found: dict[int, RankExit] = {}
    rank: tuple[int, int] | None = None
    for line in lines:
        if "rank" in line and (m := _RANK.match(line)):
            rank = (int(m.group(1)), int(m.group(2)))
        elif rank is not None and "exitcode" in line and (m := _EXITCODE.match(line)):
            found[rank[0]] = {"exit_code": int(m.group(1)), "pid": int(m.group(2)), "local_rank": rank[1]}
            rank = None
        elif rank is not None and line.strip() and ":" not in line:
            rank = None  # the block ended without an exit code line
    return found
