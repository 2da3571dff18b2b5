"""How the readers and writers of one warehouse take turns: every lock they hold, and when they wait.

A file: DuckDB locks the file itself (shared by readers, exclusive to a writer), and two files beside
it are flock'ed: `.iwh-writer` (intent: a writer holds it exclusive from wanting the file until it
closes it) and `.iwh-waiting` (whoever had to wait holds it shared, for as long as it waits).

    state          the file's lock     .iwh-writer          .iwh-waiting
    idle           -                   -                    -
    reading        shared (readers)    -                    -
    writer waits   shared (readers)    exclusive (writer)   shared (writer)
    writing        exclusive (writer)  exclusive (writer)   shared (anyone waiting)
    held           exclusive (writer)  exclusive (writer)   - (the writer's watcher polls it)

    idle ---- a reader opens ----> reading ---- the last reader closes ----> idle
    reading -- a writer opens ---> writer waits -- the readers close -----> writing
    idle ---- a writer opens ----> writing
    writing -- session ends, someone waits --> idle   (closing checkpoints the file)
    writing -- session ends, no one waits ---> held   (no checkpoint between sessions)
    held ---- the next session ---> writing
    held ---- someone waits (seen within WATCH_S) ---> idle
    any ----- its writer is killed ---> idle or reading   (the kernel drops every lock it held)

- A reader that comes while a writer waits stands back (takes .iwh-writer shared) for up to
  READER_YIELD_S, then goes ahead: readers coming one after another never starve the writer.
- A reader that opens every query (the dashboard) keeps the file open between them (`Kept`) until
  KEEP_S pass without a read, or within WATCH_S of someone waiting.
- Each waiter gives up at its deadline with a WarehouseError that says who held the file.

A lake: readers never block anyone (each reads a snapshot). Writers take turns on `LakeLock`: a
PostgreSQL session-level advisory lock keyed by the lake's id, which PostgreSQL drops when a killed
writer's session ends (a flock beside a file catalog). Both kinds hold their write lock only while a
session lasts (`store/writer.py`): parsing, the long part of an ingest, happens outside it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

import duckdb

from inductor_warehouse.store.connection import Config, quiet, with_own_secrets
from inductor_warehouse.store.errors import (SettingsConflict, WarehouseError, WarehouseLocked, WarehouseUnreadable,
                                             classify, holder, unreadable)
from inductor_warehouse.store.file import check_whole, create_file, stamp_new
from inductor_warehouse.store.lake import make_lake_id, read_lake_id, with_connect_timeout
from inductor_warehouse.store.location import Location, conninfo, redact
from inductor_warehouse.store.waits import Waiting, flock, intent_file, retry, someone_waits

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import TupleRow

READ_WAIT_S = 60.0    # how long a reader waits for a file a writer is committing to
WRITE_WAIT_S = 600.0  # how long a writer waits for another writer (or a long read) to finish
READER_YIELD_S = 2.0  # how long a new reader stands back for a writer waiting for a file
WATCH_S = 0.05  # how often an idle writer or a kept reader looks for someone waiting for its file
KEEP_S = float(os.environ.get("IWH_KEEP_OPEN_S", "30"))  # how long a kept reader outlives its last read
HELD_CHECKPOINT_THRESHOLD = "1GB"  # a held file's WAL grows to this before DuckDB checkpoints it itself


def open_file(loc: Location, read_only: bool, wait: float | None, config: Config) -> duckdb.DuckDBPyConnection:
    """The file warehouse at `loc` open (made first for a writer), once its lock is free."""
    created = not read_only and not os.path.exists(loc.path) and create_file(loc)
    wait = wait if wait is not None else READ_WAIT_S if read_only else WRITE_WAIT_S
    deadline = time.monotonic() + wait
    with Waiting(loc) as waiting:
        if read_only:
            _let_waiting_writer_first(loc, deadline, waiting)
        con = _connect(loc, read_only, wait, config, deadline, waiting)
    try:
        check_whole(con, loc)
        if created:
            stamp_new(con)
    except BaseException:
        con.close()
        raise
    return con


def _let_waiting_writer_first(loc: Location, deadline: float, waiting: Waiting) -> None:
    """A reader gives a waiting writer up to READER_YIELD_S to get in, then goes ahead anyway: this
    process may itself hold the file open in another connection, which the writer waits for."""
    try:
        fh = flock(intent_file(loc), fcntl.LOCK_SH, min(deadline, time.monotonic() + READER_YIELD_S), "", waiting)
    except WarehouseError:
        return
    if fh is not None:
        fh.close()  # only waited for the writer: readers do not hold writers back with it


def _connect(loc: Location, read_only: bool, wait: float, config: Config, deadline: float,
             waiting: Waiting) -> duckdb.DuckDBPyConnection:
    locked: list[duckdb.Error] = []  # the last lock error: it names who holds the file

    def attempt() -> duckdb.DuckDBPyConnection | None:
        try:
            return duckdb.connect(loc.path, read_only=read_only, config=with_own_secrets(config))
        except duckdb.Error as e:
            kind = classify(e)
            if kind is SettingsConflict:
                if Kept.let_go(loc.path):
                    return None  # it was this process's own kept reader, with a reader's settings
                raise SettingsConflict(
                    f"this process already has {loc.printable} open with other settings (a writer, or a reader that "
                    "may touch files): close that connection first; DuckDB shares an open file among the "
                    "connections of one process only when their settings agree") from e
            if kind is not WarehouseLocked:
                raise WarehouseUnreadable(unreadable(loc, e)) from e
            waiting.say()
            locked[:] = [e]
            return None

    def gave_up() -> WarehouseError:
        e = WarehouseLocked(f"{loc.printable} stayed locked by another process ({holder(locked[-1])}) for {wait:.0f} s: "
                            "a writer commits, or a reader runs a long query. Try again, or wait longer with --wait.")
        e.__cause__ = locked[-1]
        return e

    return retry(attempt, deadline, gave_up)


class Kept:
    """A file warehouse kept open in this process between reads. DuckDB shares one open database
    among a process's connections to a file with the same settings: while one of them stays open,
    the next read connection joins it instead of opening the file, and finds in memory what earlier
    reads brought in. It lets go within WATCH_S of anyone waiting for the file, after KEEP_S without
    a read, and when this process opens the file with other settings."""

    _all: dict[str, Kept] = {}
    _guard = threading.Lock()

    def __init__(self, loc: Location, con: duckdb.DuckDBPyConnection):
        self.loc, self.con, self.last = loc, con, time.monotonic()
        threading.Thread(target=self._watch, name="iwh-kept-reader", daemon=True).start()

    @classmethod
    def hold(cls, loc: Location, config: Config) -> None:
        with cls._guard:
            kept = cls._all.get(loc.path)
            if kept is not None:
                kept.last = time.monotonic()
                return
            if KEEP_S <= 0:
                return
            try:  # the database is open (the caller's connection): this only joins it
                con = duckdb.connect(loc.path, read_only=True, config=with_own_secrets(config))
            except duckdb.Error:
                return
            cls._all[loc.path] = cls(loc, con)

    @classmethod
    def let_go(cls, path: str, kept: Kept | None = None) -> bool:
        """Close this process's kept reader of `path` (only `kept`, when given); True if one was."""
        with cls._guard:
            if kept is not None and cls._all.get(path) is not kept:
                return False
            kept = cls._all.pop(path, None)
        if kept is None:
            return False
        with contextlib.suppress(duckdb.Error):
            kept.con.close()
        return True

    def _watch(self) -> None:
        while True:
            time.sleep(WATCH_S)
            if time.monotonic() - self.last > KEEP_S or someone_waits(self.loc):
                Kept.let_go(self.loc.path, self)
                return
            if Kept._all.get(self.loc.path) is not self:
                return


class HeldFile:
    """A writer's file, held open between its sessions while no one waits for it: closing it
    checkpoints it, which rewrites what the session touched. A thread watches for someone waiting
    while the writer is between sessions, and closes the file for them."""

    def __init__(self, loc: Location, wait: float):
        self.loc, self.wait = loc, wait
        self.con: duckdb.DuckDBPyConnection | None = None
        self._intent: TextIO | None = None
        self.busy = threading.Lock()  # held by a session, and by the watcher while it closes the file
        self._watcher: threading.Thread | None = None

    def hold(self) -> duckdb.DuckDBPyConnection:
        """The file open for writing, with the intent lock; call under `busy`."""
        if self.con is None:
            deadline = time.monotonic() + self.wait
            with Waiting(self.loc) as waiting:
                intent = flock(intent_file(self.loc), fcntl.LOCK_EX, deadline,
                                f"another writer held {self.loc.printable} for {self.wait:.0f} s", waiting)
                try:
                    con = open_file(self.loc, False, max(0.0, deadline - time.monotonic()), {})
                    quiet(con)
                    con.execute(f"SET checkpoint_threshold = '{HELD_CHECKPOINT_THRESHOLD}'")
                except BaseException:
                    if intent is not None:
                        intent.close()
                    raise
            self.con, self._intent = con, intent
        return self.con

    def release(self) -> None:
        """Close the file (its checkpoint) and let go of the intent lock; call under `busy`."""
        con, intent, self.con, self._intent = self.con, self._intent, None, None
        try:
            if con is not None:
                con.close()
        finally:
            if intent is not None:
                intent.close()

    def between_sessions(self) -> None:
        """A session ended: close the file now if someone waits, else as soon as someone does."""
        with self.busy:
            if self.con is not None and someone_waits(self.loc):
                self.release()
        if self.con is None or (self._watcher is not None and self._watcher.is_alive()):
            return

        def watch() -> None:
            while True:
                time.sleep(WATCH_S)
                with self.busy:
                    if self.con is None:
                        return
                    if someone_waits(self.loc):
                        with contextlib.suppress(duckdb.Error):
                            self.release()
                        return

        self._watcher = threading.Thread(target=watch, name="iwh-writer-watch", daemon=True)
        self._watcher.start()


class LakeLock:
    """The lake's write lock, which every location reaching the lake takes, however it is spelled
    (keys in another order, another host name, another role): a PostgreSQL session-level advisory
    lock in the catalog's database, keyed by the lake's id, or a file lock beside a file catalog's
    real path. Concurrent DuckLake commits to the same tables conflict and two writers of one run
    would both insert it: one writer commits at a time, while all of them parse."""

    def __init__(self, loc: Location, wait: float):
        self.loc, self.wait = loc, wait
        self.key: int | None = None
        self._pg: psycopg.Connection[TupleRow] | None = None  # a connection to the catalog's database
        self._file: TextIO | None = None

    def __enter__(self) -> LakeLock:
        deadline = time.monotonic() + self.wait
        if not self.loc.catalog.startswith("postgres:"):
            self._wait_for(self._try_file, deadline)
            return self
        import psycopg

        try:
            key = self.key = self.key if self.key is not None else advisory_key(self._lake_id(deadline))
            self._wait_for(lambda: self._try_advisory(key), deadline)
        except psycopg.Error as e:
            raise WarehouseError(f"cannot take the write lock of {self.loc.printable} in its catalog: "
                                 f"{redact(str(e)).strip()} (docs/team.md says which role owns what)") from e
        return self

    def _wait_for(self, take: Callable[[], bool], deadline: float) -> None:
        retry(lambda: True if take() else None, deadline,
              lambda: WarehouseLocked(f"another writer held {self.loc.printable} for {self.wait:.0f} s; "
                                      "try again, or wait longer with --wait"))

    def _session(self) -> psycopg.Connection[TupleRow]:
        if self._pg is None:
            import psycopg

            try:
                self._pg = psycopg.connect(with_connect_timeout(conninfo(self.loc.catalog[len("postgres:"):])),
                                            autocommit=True)
            except psycopg.Error as e:
                raise WarehouseError(f"cannot reach the lake's catalog {self.loc.printable}: {redact(str(e))}") from e
        return self._pg

    def _try_advisory(self, key: int) -> bool:
        row = self._session().execute("SELECT pg_try_advisory_lock(%s)", [key]).fetchone()
        assert row is not None, "a SELECT without FROM returns one row"
        return bool(row[0])

    def _lake_id(self, deadline: float) -> str:
        """The lake's id, given to it by the first writer that finds none (the lake's maker, or the
        first writer of a lake made before ids): under a lock of the catalog's database (advisory
        locks are the database's own), which also keeps two makers of a new lake apart."""
        found = read_lake_id(self._session())
        if found:
            return found
        self._wait_for(lambda: self._try_advisory(_MAKER_KEY), deadline)
        try:
            return read_lake_id(self._session()) or make_lake_id(self._session(), self.loc)
        finally:
            self._session().execute("SELECT pg_advisory_unlock(%s)", [_MAKER_KEY])

    def _try_file(self) -> bool:
        if self._file is None:
            catalog = self.loc.catalog
            path = catalog.split(":", 1)[1] if re.match(r"^(sqlite|duckdb):", catalog) else catalog
            self._file = open(f"{os.path.realpath(path)}.iwh-lock", "a")
        try:
            fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def __exit__(self, *exc: object) -> None:
        if self._pg is not None:
            self._pg.execute("SELECT pg_advisory_unlock(%s)", [self.key])
        elif self._file is not None:
            fcntl.flock(self._file, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._pg is not None:
            self._pg.close()
            self._pg = None
        if self._file is not None:
            self._file.close()
            self._file = None


def advisory_key(name: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"iwh-writer:{name}".encode(), digest_size=8).digest(), "big", signed=True)


_MAKER_KEY = advisory_key("")  # held only while a lake is made or given its id
