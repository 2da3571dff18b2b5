"""What went wrong with a warehouse, said so that its user can fix it: one exception, and the
messages for a file that cannot be read or written."""

from __future__ import annotations

import re

import duckdb

from inductor_warehouse.store.grants import permission_problem
from inductor_warehouse.store.location import Location, locate, redact

_READ_FROM = re.compile(r'Could not read .*? from file "(?P<path>[^"]+)"')


class WarehouseError(Exception):
    """A problem the user can fix; the message says how."""


def first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def unreadable(loc: Location, e: Exception) -> str:
    first = first_line(e)
    if "database file with version number" in first:
        return (f"{loc.shown} was written by another DuckDB release than this iwh's ({duckdb.__version__}; "
                f"{redact(first)}). Ingest the runs again into a new warehouse, or move the data across with that "
                "release's `EXPORT DATABASE` and this one's `IMPORT DATABASE`.")
    return (f"{loc.shown} is not a readable DuckDB warehouse ({redact(first)}). If the file was cut short or "
            "overwritten, restore it from a copy, or move it away and ingest again into a new one.")


def cut_short(loc: Location, e: Exception) -> bool:
    """A file cut short: it opens (its header and catalog come first), then a read fails where its
    blocks are missing."""
    return not loc.is_lake and isinstance(e, duckdb.IOException) and "Could not read" in str(e)


def damage_report(e: Exception) -> str | None:
    """What to tell people when a read of a file warehouse fails where its blocks are missing, from
    whichever query met it: a file whose catalog survived a cut opens, and only then fails."""
    m = _READ_FROM.search(str(e)) if isinstance(e, duckdb.IOException) else None
    return unreadable(locate(m["path"]), e) if m else None


def write_failure(loc: Location, e: Exception) -> str:
    """What to tell people when writing a warehouse failed: the first line of the cause, and for a
    full disk, that what was written before it is intact (the failed transaction left nothing)."""
    first = redact(first_line(e))
    if cut_short(loc, e):
        return unreadable(loc, e)
    denied = permission_problem(loc, e, write=True)
    if denied:
        return f"cannot write {loc.shown}: {denied}"
    if "No space left" in str(e) or "disk full" in str(e).lower():
        return (f"cannot write {loc.shown}: the disk holding it is full ({first}). Free some space and ingest "
                "again: every run written before is intact, and the runs of this batch were not written.")
    return f"cannot write {loc.shown}: {first}"


def holder(e: Exception) -> str:
    """Who holds a file's lock, as DuckDB's lock error names it."""
    m = re.search(r"\(PID (\d+)\)", str(e))
    return f"pid {m.group(1)}" if m else "another process"
