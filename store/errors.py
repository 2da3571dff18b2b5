"""What went wrong with a warehouse, said so that its user can fix it.

DuckDB tells most of its failures apart only in words: an IOException is a lock held by another
process, a file of another release, a block lost to a cut, or a full disk. `classify` reads those
words once, here, into the exception types below (dlt's sql_client shape: transient failures that
waiting may cure, terminal ones that it will not); the rest of the store and the loader decide by
type. Every type is a WarehouseError, whose message says what to do.
"""

from __future__ import annotations

import re

import duckdb

from inductor_warehouse.store.grants import permission_problem
from inductor_warehouse.store.location import Location, locate, redact


class WarehouseError(Exception):
    """A problem the user can fix; the message says how."""


class WarehouseTransient(WarehouseError):
    """Another process has the warehouse now: waiting, or trying again, may get it."""


class WarehouseLocked(WarehouseTransient):
    """Another process holds the file's lock (a writer commits, a reader runs a long query)."""


class WarehouseTerminal(WarehouseError):
    """The warehouse itself failed: trying again will not help until someone acts."""


class WarehouseUnreadable(WarehouseTerminal):
    """Not a warehouse this DuckDB can read: another release's file, not a DuckDB file, or cut short."""


class WarehouseCutShort(WarehouseUnreadable):
    """A file that opened, then failed where its blocks are missing (a copy stopped midway)."""


class WarehouseDenied(WarehouseTerminal):
    """The lake's catalog refused the role what the work needs (store/grants.py says which GRANT)."""


class WarehouseFull(WarehouseTerminal):
    """The disk holding the warehouse is full."""


class WarehouseLost(WarehouseTerminal):
    """A write failed or the database was invalidated under the connection: nothing more goes in."""


class SettingsConflict(WarehouseTerminal):
    """This process already has the file open with other settings (DuckDB shares one open file
    among a process's connections only when their settings agree)."""


_LOCKED = re.compile(r"Could not set lock on file|Conflicting lock is held")
_READ_FROM = re.compile(r'Could not read .*? from file "(?P<path>[^"]+)"')
_LOST = ("database has been invalidated", "Could not write")


def classify(e: BaseException) -> type[WarehouseError] | None:
    """The kind of warehouse failure a DuckDB error is, or None when it is not one (a statement's
    own error: a constraint, a conversion, a name)."""
    if isinstance(e, WarehouseError):
        return type(e)
    if not isinstance(e, duckdb.Error):
        return None
    text = str(e)
    if "No space left" in text or "disk full" in text.lower():
        return WarehouseFull
    if "permission denied" in text.lower():  # the catalog refusing the writer's role: every run alike
        return WarehouseDenied
    if isinstance(e, duckdb.IOException):
        if _LOCKED.search(text):
            return WarehouseLocked
        if "Could not read" in text:
            return WarehouseCutShort
        if any(s in text for s in _LOST):
            return WarehouseLost
        return WarehouseUnreadable
    if isinstance(e, duckdb.ConnectionException) and "different configuration" in text:
        return SettingsConflict
    if any(s in text for s in _LOST):
        return WarehouseLost
    return None


def is_terminal(e: BaseException) -> bool:
    """A failure of the warehouse itself, not of what one statement tried to write."""
    kind = classify(e)
    return kind is not None and issubclass(kind, WarehouseTerminal)


def first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def unreadable(loc: Location, e: Exception) -> str:
    first = first_line(e)
    if "database file with version number" in first:
        return (f"{loc.printable} was written by another DuckDB release than this iwh's ({duckdb.__version__}; "
                f"{redact(first)}). Ingest the runs again into a new warehouse, or move the data across with that "
                "release's `EXPORT DATABASE` and this one's `IMPORT DATABASE`.")
    return (f"{loc.printable} is not a readable DuckDB warehouse ({redact(first)}). If the file was cut short or "
            "overwritten, restore it from a copy, or move it away and ingest again into a new one.")


def cut_short(loc: Location, e: Exception) -> bool:
    """A file cut short: it opens (its header and catalog come first), then a read fails where its
    blocks are missing."""
    return not loc.is_lake and classify(e) is WarehouseCutShort


def damage_report(e: Exception) -> str | None:
    """What to tell people when a read of a file warehouse fails where its blocks are missing, from
    whichever query met it: a file whose catalog survived a cut opens, and only then fails."""
    m = _READ_FROM.search(str(e)) if classify(e) is WarehouseCutShort else None
    return unreadable(locate(m["path"]), e) if m else None


def write_failure(loc: Location, e: Exception) -> WarehouseError:
    """What to tell people when writing a warehouse failed, as the exception of its kind: the first
    line of the cause, and for a full disk, that what was written before it is intact (the failed
    transaction left nothing)."""
    first = redact(first_line(e))
    if cut_short(loc, e):
        return WarehouseCutShort(unreadable(loc, e))
    kind = classify(e) or WarehouseError
    if kind is WarehouseDenied:
        denied = permission_problem(loc, e, write=True)
        if denied:
            return WarehouseDenied(f"cannot write {loc.printable}: {denied}")
    if kind is WarehouseFull:
        return WarehouseFull(f"cannot write {loc.printable}: the disk holding it is full ({first}). Free some space and "
                             "ingest again: every run written before is intact, and the runs of this batch were not "
                             "written.")
    return kind(f"cannot write {loc.printable}: {first}")


def holder(e: Exception) -> str:
    """Who holds a file's lock, as DuckDB's lock error names it."""
    m = re.search(r"\(PID (\d+)\)", str(e))
    return f"pid {m.group(1)}" if m else "another process"
