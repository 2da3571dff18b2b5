"""Keeping a lake tidy (`iwh vacuum`), with DuckLake's own maintenance functions, under the lake's
write lock so that no iwh writer's files are mistaken for leftovers:

- snapshots older than a number of days are expired (every commit makes one; the latest stays
  whatever its age), and the data files only they referenced are then deleted;
- data files no snapshot references are deleted: a writer killed in its commit (kill -9, a lost
  machine) leaves the Parquet files it had written; the catalog never heard of them.

A file warehouse has neither: DuckDB reuses a file's free blocks itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import duckdb

from inductor_warehouse.store.connection import sql_literal
from inductor_warehouse.store.lake import LAKE
from inductor_warehouse.store.location import Location, locate
from inductor_warehouse.store.writer import Writer


@dataclass
class Vacuumed:
    expired_snapshots: int = 0
    unreferenced: list[str] = field(default_factory=list)  # written by no snapshot: killed writers' files
    expired_files: list[str] = field(default_factory=list)  # referenced only by expired snapshots


def vacuum(location: str | Location, *, keep_days: float, dry_run: bool, wait: float | None) -> Vacuumed:
    """Expire the lake's snapshots older than `keep_days` and delete the data files no snapshot
    references (with `dry_run`, only say which)."""
    loc = locate(location)
    if not loc.is_lake:
        raise ValueError("a file warehouse has no snapshots or loose data files to tidy")
    before = datetime.now(timezone.utc) - timedelta(days=keep_days)
    dry = "true" if dry_run else "false"
    out = Vacuumed()
    with Writer(loc, wait=wait) as writer, writer.session() as con:
        # fetched whole: a result left open is cut short by the next statement, and its work undone
        out.expired_snapshots = len(con.execute(
            f"SELECT snapshot_id FROM ducklake_expire_snapshots({sql_literal(LAKE)}, dry_run => {dry}, "
            f"older_than => {sql_literal(before.isoformat())}::TIMESTAMPTZ)").fetchall())
        out.expired_files = _paths(con, f"ducklake_cleanup_old_files({sql_literal(LAKE)}, dry_run => {dry}, "
                                        "cleanup_all => true)")
        out.unreferenced = _paths(con, f"ducklake_delete_orphaned_files({sql_literal(LAKE)}, dry_run => {dry}, "
                                       "cleanup_all => true)")
    return out


def _paths(con: duckdb.DuckDBPyConnection, call: str) -> list[str]:
    return sorted(path for (path,) in con.execute(f"SELECT path FROM {call}").fetchall())
