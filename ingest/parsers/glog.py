"""The glog prefix torch's log formatter writes before every message, TORCH_TRACE and TORCH_LOGS alike.

    [rank0]:V1122 00:09:40.916000 18849 torch/_dynamo/guards.py:5400] <message>

An optional `[rankN]:` (TORCH_LOGS text under a distributed launcher; traces put the rank in the
envelope), level, MMDD, time, then the pid (2.5+) or a 64-bit thread id (2.3/2.4), then the source
path, which may hold spaces or a Windows drive's colon, and its line.
"""

from __future__ import annotations

import re
from typing import TypeAlias

PREFIX = (r"(?:\[rank(?P<rank>\d+)\]:)?[VIWEC](?P<month>\d\d)(?P<day>\d\d) (?P<time>\d\d:\d\d:\d\d\.\d{6}) "
          r"(?P<process>\d+) [^\]\n]*?:\d+\] ")
GLOG = re.compile(PREFIX.encode())
_LINE_START = re.compile(b"^" + PREFIX.encode(), re.M)
# (rank, month, day, hour, minute, pid or thread id), as the prefix spells them
Prefix: TypeAlias = tuple[bytes | None, bytes, bytes, bytes, bytes, bytes]
# Linux pids stop at 2^22: a larger 4th field is the thread id 2.3/2.4 wrote there
MAX_PID = 1 << 22


def first_prefix(head: bytes) -> Prefix | None:
    """(rank, month, day, hour, minute, pid or thread id) of the first line of `head` that starts
    with a glog prefix, as bytes (rank None without `[rankN]:`); None when no line does."""
    m = _LINE_START.search(head)
    if m is None:
        return None
    clock = m.group("time")
    return m.group("rank"), m.group("month"), m.group("day"), clock[:2], clock[3:5], m.group("process")
