"""Write sessions on a warehouse: each holds the write lock only while it lasts (protocol.py), so
readers and other writers get in between sessions; the first one brings the warehouse up to date."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import duckdb

from inductor_warehouse.store.errors import write_failure
from inductor_warehouse.store.lake import need_lake_extras
from inductor_warehouse.store.location import Location, locate
from inductor_warehouse.store.migrate import migrate
from inductor_warehouse.store.opening import connect
from inductor_warehouse.store.protocol import WRITE_WAIT_S, HeldFile, LakeLock


class Writer:
    """Write sessions on one warehouse; a session waits at most `wait` seconds for the write lock.
    The first session brings the warehouse up to date (`migrate`: its rollups whole too)."""

    def __init__(self, location: str | os.PathLike[str] | Location | None = None, *, wait: float | None = None):
        self.location = locate(location)
        self.wait = wait = WRITE_WAIT_S if wait is None else wait  # 0: fail at once, never wait
        if self.location.is_lake:
            need_lake_extras(self.location)
        self._file = None if self.location.is_lake else HeldFile(self.location, wait)
        self._lock = LakeLock(self.location, wait) if self.location.is_lake else None
        self._lake: duckdb.DuckDBPyConnection | None = None
        self._migrated = False
        self.applied: list[str] = []  # the migrations the first session applied

    @property
    def is_lake(self) -> bool:
        return self.location.is_lake

    @contextlib.contextmanager
    def session(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection holding the write lock; a failure of the warehouse itself (a full disk, a
        lost catalog) leaves it as a WarehouseError that says what happened to what."""
        try:
            with self._session() as con:
                yield con
        except duckdb.Error as e:
            raise write_failure(self.location, e) from e

    @contextlib.contextmanager
    def _session(self) -> Iterator[duckdb.DuckDBPyConnection]:
        if self._file is not None:
            with self._file.busy:
                con = self._file.hold()
                try:
                    self._migrate(con)
                    yield con
                except BaseException:
                    with contextlib.suppress(duckdb.Error):
                        self._file.release()  # after a failure, start afresh
                    raise
            self._file.between_sessions()
            return
        assert self._lock is not None, "a lake's writer"
        with self._lock:
            if self._lake is None:
                self._lake = connect(self.location, migrate_schema=False)
            self._migrate(self._lake)
            yield self._lake

    def _migrate(self, con: duckdb.DuckDBPyConnection) -> None:
        if not self._migrated:
            self.applied = migrate(con)
            self._migrated = True

    def close(self) -> None:
        if self._file is not None:
            with self._file.busy:
                try:
                    self._file.release()  # the checkpoint: what the sessions wrote goes into the file
                except duckdb.Error as e:
                    raise write_failure(self.location, e) from e
            return
        if self._lake is not None:
            self._lake.close()
            self._lake = None
        if self._lock is not None:
            self._lock.close()

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
