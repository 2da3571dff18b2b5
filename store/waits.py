"""How a process waits for a warehouse's locks: the one retry loop, the flock'ed files beside a
file warehouse (`.iwh-writer`: a writer wants the file; `.iwh-waiting`: someone waits for it), and
saying that one waits. `store/protocol.py` draws who holds what, and when."""

from __future__ import annotations

import fcntl
import time
from collections.abc import Callable
from typing import TextIO, TypeVar

from inductor_warehouse.store.errors import WarehouseError, WarehouseLocked
from inductor_warehouse.store.location import Location

FIRST_PAUSE_S, MAX_PAUSE_S = 0.01, 0.2  # a waiter's pauses between tries: growing, and never long

T = TypeVar("T")


def intent_file(loc: Location) -> str:
    return loc.path + ".iwh-writer"


def waiting_file(loc: Location) -> str:
    return loc.path + ".iwh-waiting"


class Waiting:
    """Says "I wait for this file" (a shared lock on its waiting file) from the first `say()` until
    the end of the `with`."""

    def __init__(self, loc: Location):
        self.loc = loc
        self.fh: TextIO | None = None

    def say(self) -> None:
        if self.fh is None:
            try:
                self.fh = open(waiting_file(self.loc), "a")
                fcntl.flock(self.fh, fcntl.LOCK_SH)  # never blocks: only writers check, non-blocking
            except OSError:
                self.fh = None  # a read-only folder: nothing to coordinate with

    def __enter__(self) -> Waiting:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None


def someone_waits(loc: Location) -> bool:
    try:
        fh = open(waiting_file(loc), "a")
    except OSError:
        return True  # cannot tell: do not keep the file from anyone
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        fh.close()


def retry(attempt: Callable[[], T | None], deadline: float, gave_up: Callable[[], BaseException]) -> T:
    """What `attempt()` returns once it returns something (None: not yet), trying again after pauses
    that grow from FIRST_PAUSE_S to MAX_PAUSE_S; at `deadline`, the exception `gave_up()` makes. The
    one wait-and-retry loop of the store: every lock is waited for here."""
    pause = FIRST_PAUSE_S
    while True:
        got = attempt()
        if got is not None:
            return got
        if time.monotonic() >= deadline:
            raise gave_up()
        time.sleep(pause)
        pause = min(pause * 1.5, MAX_PAUSE_S)


def flock(path: str, mode: int, deadline: float, what: str, waiting: Waiting | None = None) -> TextIO | None:
    """The file at `path` flock'ed in `mode`, waiting until `deadline`; None when it cannot be made
    (a read-only folder: nothing to coordinate with). `waiting` is told once it has to wait."""
    try:
        fh = open(path, "a")
    except OSError:
        return None

    def attempt() -> TextIO | None:
        try:
            fcntl.flock(fh, mode | fcntl.LOCK_NB)
            return fh
        except BlockingIOError:
            if waiting is not None:
                waiting.say()
            return None

    def gave_up() -> WarehouseError:
        fh.close()
        return WarehouseLocked(f"{what}; try again, or wait longer with --wait")

    return retry(attempt, deadline, gave_up)


