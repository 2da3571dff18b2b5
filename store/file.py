"""A warehouse file: made whole before it appears under its name, checked whole when it is opened,
and the storage format it is written in."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil

import duckdb

from inductor_warehouse.schema import ddl
from inductor_warehouse.store.connection import one_row, quiet
from inductor_warehouse.store.errors import WarehouseError, first_line, unreadable
from inductor_warehouse.store.location import Location, redact
from inductor_warehouse.store.migrate import migrate

# the storage format a new warehouse file is written in: DuckDB's default keeps files readable by
# 0.10.2 and so leaves out the string compressions of 1.2 on; 1.4 is DuckDB's long-term release, whose
# CLI still opens the file. A file keeps the format it was made in; `iwh copy` moves an older one.
STORAGE_VERSION = "v1.4.0"
_HEADERS = 3 * 4096  # a DuckDB file's main header and its two database headers, before its blocks
_NEW_SUFFIX = ".iwh-new-"


def create_file(loc: Location) -> bool:
    """A new warehouse file, made whole before it appears under its name: written beside it under a
    name of this process's (in STORAGE_VERSION's format, which it keeps), closed, then linked in,
    which fails when another process made the warehouse first. A kill midway leaves only the file
    beside it, which the next creation removes; a failure of any kind leaves nothing, and says why
    (opening the name anyway would make an empty file there, as DuckDB does for a name that does
    not exist, which readers would call older than this version). True when this process made it as
    a copy of the empty warehouse (`stamp_new` then dates its migrations)."""
    new = f"{loc.path}{_NEW_SUFFIX}{os.getpid()}"
    _remove_abandoned(loc)
    try:
        copied = _copy_empty(new)
        if not copied:
            _make_schema(new)
        return _link_in(new, loc.path) and copied
    except (duckdb.Error, OSError) as e:  # a read-only or missing folder, a full disk, a file not installed
        raise WarehouseError(f"cannot create a warehouse at {loc.printable}: {redact(first_line(e))}") from e
    finally:
        for leftover in (new, new + ".wal"):
            with contextlib.suppress(OSError):
                os.unlink(leftover)


def _copy_empty(new: str) -> bool:
    """`new` as a copy of the empty warehouse of this schema, made once and kept in the user's cache
    folder (IWH_CACHE_DIR, else XDG's): making the schema takes 60 to 80 ms of DuckDB's catalog work,
    a copy 2 ms, and a new warehouse is made at the start of many a short ingest. False where there
    is no cache folder to keep it in; the caller then makes the schema itself. Its `_migrations`
    say when the copy was made (open_file stamps them)."""
    folder = _cache_folder()
    if folder is None:
        return False
    empty = os.path.join(folder, f"empty-{_schema_digest()}.duckdb")
    if not os.path.exists(empty):
        made = f"{empty}{_NEW_SUFFIX}{os.getpid()}"
        try:
            _make_schema(made)
            os.replace(made, empty)  # whole or not at all, whoever else makes it at the same time
        except OSError:
            return False
        finally:
            for leftover in (made, made + ".wal"):
                with contextlib.suppress(OSError):
                    os.unlink(leftover)
    try:
        shutil.copyfile(empty, new)
    except OSError:
        return False
    return True


def _cache_folder() -> str | None:
    folder = os.environ.get("IWH_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "inductor-warehouse")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    return folder if os.access(folder, os.W_OK) else None


def _schema_digest() -> str:
    """What an empty warehouse depends on: DuckDB's version and storage format, the tables, the
    migrations recorded and the views."""
    parts = [duckdb.__version__, STORAGE_VERSION, ddl.CURRENT.read_text(),
             *(p.stem for p in ddl.migration_files()), ddl.current_views_digest()]
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=12).hexdigest()


def stamp_new(con: duckdb.DuckDBPyConnection) -> None:
    """A warehouse copied from the empty one: its migrations were applied now, as far as it knows."""
    con.execute("UPDATE _migrations SET applied_at = now()")


def _make_schema(path: str) -> None:
    con = duckdb.connect(path, config={"storage_compatibility_version": STORAGE_VERSION})
    try:
        quiet(con)
        migrate(con)
    finally:
        con.close()


def _link_in(new: str, path: str) -> bool:
    """`new` under the name `path` too, unless a file has that name already (another maker won:
    False)."""
    try:
        os.link(new, path)
    except FileExistsError:
        return False
    except OSError:  # a file system without hard links: the same, but not proof against a race
        if os.path.exists(path):
            return False
        os.replace(new, path)
    return True


def _remove_abandoned(loc: Location) -> None:
    """Files of new warehouses whose makers died before linking them in."""
    folder, name = os.path.split(os.path.abspath(loc.path))
    with contextlib.suppress(OSError):
        for entry in os.listdir(folder):
            if not entry.startswith(name + _NEW_SUFFIX):
                continue
            pid = entry[len(name) + len(_NEW_SUFFIX):].removesuffix(".wal")
            if pid.isdigit() and not _alive(int(pid)):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, entry))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process
    return True


def check_whole(con: duckdb.DuckDBPyConnection, loc: Location) -> None:
    """A file cut short (a copy stopped midway, a disk that filled) opens when its catalog survived,
    and fails only in the query that reads a lost block, or never (`SELECT 1`): its blocks in use
    say how long it must at least be (free ones may lie past its end, after a writer was killed).
    Not while a WAL waits to be replayed: its blocks may not be in the file yet."""
    if os.path.exists(loc.path + ".wal"):
        return
    block_size, blocks = one_row(con, "SELECT block_size, used_blocks FROM pragma_database_size()")
    have, need = os.path.getsize(loc.path), _HEADERS + blocks * block_size
    if have < need:
        raise WarehouseError(unreadable(loc, Exception(f"it holds {have} bytes, its blocks in use take {need}")))


def older_storage(con: duckdb.DuckDBPyConnection) -> str | None:
    """The storage format of the open warehouse file when it is older than STORAGE_VERSION (one made
    before it), else None (a current file; a lake, whose data is Parquet)."""
    row = con.execute("SELECT tags['storage_version'] FROM duckdb_databases() "
                      "WHERE database_name = current_database() AND type = 'duckdb'").fetchone()
    if not row or not row[0]:
        return None

    def version(tag: str) -> tuple[int, ...]:
        return tuple(int(x) for x in re.findall(r"\d+", tag)[:3])

    return row[0] if version(row[0]) < version(STORAGE_VERSION) else None
