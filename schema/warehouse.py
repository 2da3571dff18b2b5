"""Opening a warehouse, for reading or writing, wherever it lives (see `schema/location.py`).

Concurrency contract, the same for both kinds of warehouse:
- Writers hold the warehouse's write lock only while they commit (`Writer.session`): a DuckDB
  file's own lock, or a PostgreSQL advisory lock for a DuckLake. Parsing, the long part of an
  ingest, happens outside it; another writer waits for the lock up to a bounded time. A file's
  writer keeps it open between its sessions while no one waits for it (closing a file
  checkpoints it, rewriting what the session touched); anyone who waits says so beside it
  (`_waiting`), and the writer closes it within WATCH_S.
- Readers see a run whole or not at all: every run is written in one transaction (a file's long
  logs in parts, under the file's lock, which readers wait for). Readers of a file open it for
  each query and close it, so a writer gets in between; a dashboard keeps it open between its
  queries only until a writer waits (`_Kept`); a lake's readers never block anyone.

Migrations (`migrations/NNNN_*.sql`) are append-only and recorded in `_migrations`, so an older
warehouse is upgraded in place. A new warehouse starts at the current schema: `current.sql`, the
tables every migration leaves (generated: `make schema`; a test keeps it equal to them), made in
one transaction (a lake's without the key constraints DuckLake has no place for); later migrations
apply to it as written. Views (`views/*.sql`, with their macros) hold the metric definitions and
are re-created whenever a writer first opens a warehouse, so a changed definition reaches old
warehouses too.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import re
import tempfile
import threading
import time
import uuid
from pathlib import Path

import duckdb

from inductor_warehouse.schema.location import LAKE_PREFIX, Location, locate, redact, split_password

# The warehouse's tables, as a user sees them: `runs`, the run-level facts (each row carries run_id),
# and the kernel sources they share. tests/test_warehouse_tables.py checks it against the migrations.
FACT_TABLES = (
    "graphs", "ops", "kernels", "fusions", "layouts", "lineage", "artifacts", "ingest_errors",
    "compilations", "timings", "compile_events", "fusion_decisions", "guards", "cache_events",
    "autotune_choices", "shape_events", "cudagraph_events", "collectives", "op_estimates", "graph_executions",
    "trace_records", "spyre_handles", "spyre_kernel_identities", "spyre_kernel_occurrences", "spyre_compiles",
    "harness_results", "triton_kernels",
    # no parser's: the loader sums a run's rows into these as it writes them (fill_rollups)
    "run_rollups", "run_tallies",
)
# texts that repeat from run to run, kept once by hash: table -> (hash column, text column)
SHARED_TEXTS = {"kernel_sources": ("source_hash", "source"), "guard_trees": ("tree_hash", "text"),
                "inductor_configs": ("config_hash", "text")}
TABLES = ("runs", *FACT_TABLES, *SHARED_TEXTS)

HERE = Path(__file__).parent
MIGRATIONS = HERE / "migrations"
VIEWS = HERE / "views"
CURRENT = HERE / "current.sql"
LAKE = "wh"  # the alias a lake is attached under; `USE wh` makes its tables the unqualified ones
READ_WAIT_S = 60.0    # how long a reader waits for a file a writer is committing to
WRITE_WAIT_S = 600.0  # how long a writer waits for another writer (or a long read) to finish
READER_YIELD_S = 2.0  # how long a new reader stands back for a writer waiting for a file
WATCH_S = 0.05  # how often an idle writer looks for someone waiting for its file
# how long a dashboard keeps a file warehouse open after its last read (_Kept)
KEEP_S = float(os.environ.get("IWH_KEEP_OPEN_S", "30"))
# a held file's WAL grows to this before DuckDB checkpoints it on its own: closing checkpoints anyway
HELD_CHECKPOINT_THRESHOLD = "1GB"
# what one reader's query may use; past it the query fails with DuckDB's out-of-memory message
READ_MEMORY = os.environ.get("IWH_QUERY_MEMORY", "4GB")
# a reader's connection, from its start: no extension loaded that this code did not load, and no
# Python variable read as a table (DuckDB scans a caller's data frames by name)
READER_CONFIG = {"autoload_known_extensions": False, "autoinstall_known_extensions": False,
                 "allow_community_extensions": False, "python_enable_replacements": False}
# the storage format a new warehouse file is written in. DuckDB's default keeps files readable by
# 0.10.2 and so leaves out the string compressions of 1.2 on: the 67 GPU logs' warehouse took
# 60 MB in it and takes 13 MB in this one (guard trees 35 MB to 1 MB), and its closing checkpoint
# is faster. 1.4 is DuckDB's long-term release: its CLI still opens the file. A file keeps the
# format it was made in; `iwh copy` into a new file moves an older one to this.
STORAGE_VERSION = "v1.4.0"
_LOCKED = re.compile(r"Could not set lock on file|Conflicting lock is held")


class WarehouseError(Exception):
    """A problem the user can fix; the message says how."""


def default_db_path() -> str:
    return locate().text


def migration_files() -> list[Path]:
    return sorted(MIGRATIONS.glob("[0-9][0-9][0-9][0-9]_*.sql"))


def view_files() -> list[Path]:
    # Views may depend on views: files are named so that sorted order is dependency order.
    return sorted(VIEWS.glob("*.sql"))


# ---- opening ------------------------------------------------------------------------------------

def connect(location: str | os.PathLike | Location | None = None, *, read_only: bool = False,
            wait: float | None = None, lockdown: bool = False, migrate_schema: bool = True,
            keep_open: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the warehouse at `location`: read-only, or for writing (created and migrated).

    `wait`: seconds to wait while another process holds a file's lock (default READ_WAIT_S or
    WRITE_WAIT_S). `lockdown` (readers): SQL on the connection can read the warehouse and nothing
    else: no files, no ATTACH, no settings changed, at most READ_MEMORY of memory.
    `keep_open` (readers of a file that open it for every query, as the dashboard does): the file
    stays open in this process after the connection closes, until a writer waits for it (_Kept).
    A lake's writers must hold its write lock: use `Writer`.
    """
    loc = locate(location)
    if read_only and not loc.exists():
        raise WarehouseError(f"No warehouse at {loc.shown}. Create one with `iwh ingest PATH --db {loc.shown}` "
                             "or point to an existing one with --db or IWH_DB.")
    config = dict(READER_CONFIG) if lockdown else {}
    if loc.is_lake:
        con = _open_lake(loc, read_only, config)
    else:
        # in a file, settings are the database's, shared by every connection of this process to it:
        # they are given when it is opened; the lock comes after quiet(), which is per connection
        config.update({"enable_external_access": False, "memory_limit": READ_MEMORY} if lockdown else {})
        con = _open_file(loc, read_only, wait, config)
        if lockdown:
            _quiet_and_lock(con)
        else:
            quiet(con)
    try:
        if read_only:
            _check_current(con, loc)
        elif migrate_schema:
            migrate(con)
        if lockdown and loc.is_lake:
            _lock_down_lake(con)
    except duckdb.IOException as e:
        con.close()
        if not _cut_short(loc, e):
            raise
        raise WarehouseError(_unreadable(loc, e)) from e
    except BaseException:
        con.close()
        raise
    if keep_open and read_only and not loc.is_lake:
        _Kept.hold(loc, config)  # a warehouse found current: one that is not is not kept from its upgrade
    return con


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


def _open_file(loc: Location, read_only: bool, wait: float | None, config: dict) -> duckdb.DuckDBPyConnection:
    if not read_only and not os.path.exists(loc.path):
        _create_file(loc)
    deadline = time.monotonic() + (wait if wait is not None else READ_WAIT_S if read_only else WRITE_WAIT_S)
    with _waiting(loc) as waiting:
        if read_only:
            _let_waiting_writer_first(loc, deadline, waiting)
        con = _connect_file(loc, read_only, wait, config, deadline, waiting)
    try:
        _check_whole(con, loc)
    except BaseException:
        con.close()
        raise
    return con


_HEADERS = 3 * 4096  # a DuckDB file's main header and its two database headers, before its blocks


def _check_whole(con: duckdb.DuckDBPyConnection, loc: Location) -> None:
    """A file cut short (a copy stopped midway, a disk that filled) opens when its catalog survived,
    as it does in any file checkpointed more than once, and fails only in the query that reads a
    lost block, or never (`SELECT 1`). Its blocks in use say how long it must at least be (free
    ones may lie past its end, after a writer was killed): 1 ms at each open. Not while a WAL waits
    to be replayed: its blocks may not be in the file yet."""
    if os.path.exists(loc.path + ".wal"):
        return
    block_size, blocks = con.execute("SELECT block_size, used_blocks FROM pragma_database_size()").fetchone()
    have, need = os.path.getsize(loc.path), _HEADERS + blocks * block_size
    if have < need:
        raise WarehouseError(_unreadable(loc, Exception(f"it holds {have} bytes, its blocks in use take {need}")))


def _create_file(loc: Location) -> None:
    """A new warehouse file, made whole before it appears under its name: written beside it under a
    name of this process's (in STORAGE_VERSION's format, which it keeps), closed, then linked in,
    which fails when another process made the warehouse first. Made where it is named, a file
    killed before its schema was committed was left empty, and readers called it older than this
    version. A kill midway now leaves only the file beside it, which the next creation removes; a
    failure of any kind leaves nothing, and says why (opening the name anyway would make an empty
    file there, as DuckDB does for a name that does not exist)."""
    new = f"{loc.path}{_NEW_SUFFIX}{os.getpid()}"
    _remove_abandoned(loc)
    try:
        _make_schema(new)
        _link_in(new, loc.path)
    except (duckdb.Error, OSError) as e:  # a read-only or missing folder, a full disk, a file not installed
        said = redact(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)
        raise WarehouseError(f"cannot create a warehouse at {loc.shown}: {said}") from e
    finally:
        for leftover in (new, new + ".wal"):
            with contextlib.suppress(OSError):
                os.unlink(leftover)


def _make_schema(path: str) -> None:
    con = duckdb.connect(path, config={"storage_compatibility_version": STORAGE_VERSION})
    try:
        quiet(con)
        migrate(con)
    finally:
        con.close()


def _link_in(new: str, path: str) -> None:
    """`new` under the name `path` too, unless a file has that name already (another maker won)."""
    try:
        os.link(new, path)
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links: the same, but not proof against a race
        if not os.path.exists(path):
            os.replace(new, path)


_NEW_SUFFIX = ".iwh-new-"


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


def _connect_file(loc: Location, read_only: bool, wait: float | None, config: dict, deadline: float,
                  waiting) -> duckdb.DuckDBPyConnection:
    pause = 0.02
    while True:
        try:
            return duckdb.connect(loc.path, read_only=read_only, config=config)
        except duckdb.IOException as e:
            if not _LOCKED.search(str(e)):
                raise WarehouseError(_unreadable(loc, e)) from e
            waiting.say()
            if time.monotonic() >= deadline:
                raise WarehouseError(
                    f"{loc.shown} stayed locked by another process ({_holder(e)}) for "
                    f"{(wait if wait is not None else READ_WAIT_S if read_only else WRITE_WAIT_S):.0f} s: "
                    "a writer commits, or a reader runs a long query. Try again, or wait longer with --wait."
                ) from e
            time.sleep(pause)
            pause = min(pause * 1.5, 0.5)
        except duckdb.ConnectionException as e:
            if "different configuration" not in str(e):
                raise WarehouseError(_unreadable(loc, e)) from e
            if _Kept.let_go(loc.path):
                continue  # it was this process's own kept reader, with a reader's settings
            raise WarehouseError(
                f"this process already has {loc.shown} open with other settings (a writer, or a reader that "
                "may touch files): close that connection first; DuckDB shares an open file among the "
                "connections of one process only when their settings agree") from e
        except duckdb.Error as e:
            raise WarehouseError(_unreadable(loc, e)) from e


def quiet(con: duckdb.DuckDBPyConnection) -> None:
    """No progress bar: DuckDB prints one on stdout when a statement runs past 2 s, into the middle
    of `--format json` output (the fuzzer found it)."""
    con.execute("SET enable_progress_bar = false")


def _quiet_and_lock(con: duckdb.DuckDBPyConnection) -> None:
    """A reader's connection: quiet, then no SQL on it may change a setting (it could turn external
    access back on). Once one connection locks the process's shared database, the next cannot SET."""
    locked = con.execute("SELECT current_setting('lock_configuration')").fetchone()[0]
    if not locked:
        quiet(con)
        con.execute("SET lock_configuration = true")


def _intent_file(loc: Location) -> str:
    """Beside a file warehouse: a writer holds it while it waits for and holds the warehouse, so
    new readers wait for it instead of keeping the file's lock busy forever between them."""
    return loc.path + ".iwh-writer"


def _waiting_file(loc: Location) -> str:
    """Beside a file warehouse: whoever waits for the file (a reader, a writer) holds it shared, so
    a writer that keeps the file open between its sessions sees someone waits, and closes it."""
    return loc.path + ".iwh-waiting"


class _waiting:  # noqa: N801 (a context manager, used like a function)
    """Says "I wait for this file" (a shared lock on its waiting file) from the first `say()` until
    the end of the `with`."""

    def __init__(self, loc: Location):
        self.loc = loc
        self.fh = None

    def say(self) -> None:
        if self.fh is None:
            try:
                self.fh = open(_waiting_file(self.loc), "a")
                fcntl.flock(self.fh, fcntl.LOCK_SH)  # never blocks: only writers check, non-blocking
            except OSError:
                self.fh = None  # a read-only folder: nothing to coordinate with

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.fh is not None:
            self.fh.close()
            self.fh = None


def _someone_waits(loc: Location) -> bool:
    try:
        fh = open(_waiting_file(loc), "a")
    except OSError:
        return True  # cannot tell: do not keep the file from anyone
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        fh.close()


def _flock(path: str, mode: int, deadline: float, what: str, waiting: _waiting | None = None):
    """The file at `path` flock'ed in `mode`, waiting until `deadline`; None when it cannot be made
    (a read-only folder: nothing to coordinate with). `waiting` is told once it has to wait."""
    try:
        fh = open(path, "a")
    except OSError:
        return None
    pause = 0.01
    while True:
        try:
            fcntl.flock(fh, mode | fcntl.LOCK_NB)
            return fh
        except BlockingIOError:
            if waiting is not None:
                waiting.say()
            if time.monotonic() >= deadline:
                fh.close()
                raise WarehouseError(f"{what}; try again, or wait longer with --wait") from None
            time.sleep(pause)
            pause = min(pause * 1.5, 0.2)


def _let_waiting_writer_first(loc: Location, deadline: float, waiting: _waiting) -> None:
    """A reader gives a waiting writer up to READER_YIELD_S to get in, then goes ahead anyway: this
    process may itself hold the file open in another connection, which the writer waits for."""
    try:
        fh = _flock(_intent_file(loc), fcntl.LOCK_SH, min(deadline, time.monotonic() + READER_YIELD_S), "", waiting)
    except WarehouseError:
        return
    if fh is not None:
        fh.close()  # only waited for the writer: readers do not hold writers back with it


class _Kept:
    """A file warehouse kept open in this process between reads. DuckDB shares one open database
    among a process's connections to a file with the same settings: while one of them stays open,
    the next read connection opens in 1 ms instead of 25, and finds in memory what earlier reads
    brought in (the Explorer's queries take 0.65 s instead of 1.6 at 100,000 runs). It lets go
    within WATCH_S of anyone waiting for the file (a writer), after KEEP_S without a read, and when
    this process opens the file with other settings; the memory it held goes back then."""

    _all: dict[str, _Kept] = {}
    _guard = threading.Lock()

    def __init__(self, loc: Location, con: duckdb.DuckDBPyConnection):
        self.loc, self.con, self.last = loc, con, time.monotonic()
        threading.Thread(target=self._watch, name="iwh-kept-reader", daemon=True).start()

    @classmethod
    def hold(cls, loc: Location, config: dict) -> None:
        with cls._guard:
            kept = cls._all.get(loc.path)
            if kept is not None:
                kept.last = time.monotonic()
                return
            if KEEP_S <= 0:
                return
            try:  # the database is open (the caller's connection): this only joins it
                con = duckdb.connect(loc.path, read_only=True, config=config)
            except duckdb.Error:
                return
            cls._all[loc.path] = cls(loc, con)

    @classmethod
    def let_go(cls, path: str, kept: _Kept | None = None) -> bool:
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
            if time.monotonic() - self.last > KEEP_S or _someone_waits(self.loc):
                _Kept.let_go(self.loc.path, self)
                return
            if _Kept._all.get(self.loc.path) is not self:
                return


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back after a failure, keeping the failure: a failed COMMIT has already rolled back, and
    the ROLLBACK's own error ("no transaction is active") must not hide why."""
    with contextlib.suppress(duckdb.Error):
        con.execute("ROLLBACK")


def write_failure(loc: Location, e: Exception) -> str:
    """What to tell people when writing a warehouse failed: the first line of the cause, and for a
    full disk, that what was written before it is intact (the failed transaction left nothing)."""
    first = redact((str(e).strip().splitlines() or [type(e).__name__])[0])
    if _cut_short(loc, e):
        return _unreadable(loc, e)
    if "No space left" in str(e) or "disk full" in str(e).lower():
        return (f"cannot write {loc.shown}: the disk holding it is full ({first}). Free some space and ingest "
                "again: every run written before is intact, and the runs of this batch were not written.")
    return f"cannot write {loc.shown}: {first}"


def _holder(e: Exception) -> str:
    m = re.search(r"\(PID (\d+)\)", str(e))
    return f"pid {m.group(1)}" if m else "another process"


def _cut_short(loc: Location, e: Exception) -> bool:
    """A file cut short: it opens (its header and catalog come first), then a read fails where its
    blocks are missing."""
    return not loc.is_lake and isinstance(e, duckdb.IOException) and "Could not read" in str(e)


_READ_FROM = re.compile(r'Could not read .*? from file "(?P<path>[^"]+)"')


def damage_report(e: Exception) -> str | None:
    """What to tell people when a read of a file warehouse fails where its blocks are missing, from
    whichever query met it: a file whose catalog survived a cut (it was written early, by an older
    checkpoint) opens, and only then fails."""
    m = _READ_FROM.search(str(e)) if isinstance(e, duckdb.IOException) else None
    return _unreadable(locate(m["path"]), e) if m else None


def _unreadable(loc: Location, e: Exception) -> str:
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if "database file with version number" in first:
        return (f"{loc.shown} was written by another DuckDB release than this iwh's ({duckdb.__version__}; "
                f"{redact(first)}). Ingest the runs again into a new warehouse, or move the data across with that "
                "release's `EXPORT DATABASE` and this one's `IMPORT DATABASE`.")
    return (f"{loc.shown} is not a readable DuckDB warehouse ({redact(first)}). If the file was cut short or "
            "overwritten, restore it from a copy, or move it away and ingest again into a new one.")


def _open_lake(loc: Location, read_only: bool, config: dict | None = None) -> duckdb.DuckDBPyConnection:
    need_lake_extras(loc)
    con = duckdb.connect(":memory:", config={"extension_directory": extension_directory(),
                                             "autoinstall_known_extensions": False, **(config or {})})
    try:
        quiet(con)
        postgres = loc.catalog.startswith("postgres:")
        for ext in ("ducklake", "postgres") if postgres else ("ducklake",):
            con.execute(f"LOAD {ext}")
        # (a reader does not know where the data is before the ATTACH: with AWS keys, it may be S3)
        if _uses_s3(loc) or (os.environ.get("AWS_ACCESS_KEY_ID") and has_extension("httpfs")):
            load_s3(con)
        options = ["READ_ONLY"] if read_only else ["DATA_INLINING_ROW_LIMIT 0"]
        if loc.data_path and not read_only:
            options.append(f"DATA_PATH {sql_literal(loc.data_path)}")
        con.execute(f"ATTACH {sql_literal(attach_catalog(con, loc, LAKE, options))} AS {LAKE} ({', '.join(options)})")
        con.execute(f"USE {LAKE}")
    except duckdb.Error as e:
        con.close()
        raise WarehouseError(_lake_problem(loc, e)) from e
    return con


def attach_catalog(con: duckdb.DuckDBPyConnection, loc: Location, alias: str, options: list[str]) -> str:
    """What to ATTACH for the lake at `loc` under `alias`. A password in a PostgreSQL catalog's
    location goes into a DuckDB secret of its own instead (added to `options`): DuckDB lists an
    attached database's path in duckdb_databases() and its allowed paths in duckdb_settings(), and
    shows a secret's password only redacted."""
    catalog = loc.catalog
    if catalog.startswith("postgres:"):
        conninfo, password = split_password(with_connect_timeout(catalog[len("postgres:"):]))
        if password is not None:
            secret = f"{alias}_catalog"
            con.execute(f"CREATE OR REPLACE SECRET {secret} (TYPE postgres, PASSWORD {sql_literal(password)})")
            options.append(f"METADATA_PARAMETERS MAP {{'SECRET': {sql_literal(secret)}}}")
        catalog = "postgres:" + conninfo
    return "ducklake:" + catalog


def _lake_problem(loc: Location, e: Exception) -> str:
    text = redact(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)
    if "data_path is not set" in text:
        return (f"{loc.shown} is a new lake: say where its data goes once, with --data-path DIR or "
                "s3://bucket/prefix (or IWH_DATA_PATH).")
    if "creating a new DuckLake is explicitly disabled" in text or "does not exist" in text:
        return (f"No warehouse at {loc.shown} ({text}). Create the PostgreSQL database, then "
                "`iwh ingest PATH --db LOCATION --data-path DIR` makes the lake.")
    return f"cannot open the lake {loc.shown}: {text}"


def _uses_s3(loc: Location) -> bool:
    return (loc.data_path or "").startswith("s3://")


CONNECT_TIMEOUT_S = 10  # libpq waits for a catalog server that does not answer forever, unless told


def with_connect_timeout(conninfo: str) -> str:
    """A libpq connection string (`k=v ...` or a URI) that gives up connecting after
    CONNECT_TIMEOUT_S, unless it says otherwise."""
    if "connect_timeout" in conninfo:
        return conninfo
    if "://" in conninfo:
        return f"{conninfo}{'&' if '?' in conninfo else '?'}connect_timeout={CONNECT_TIMEOUT_S}"
    return f"{conninfo} connect_timeout={CONNECT_TIMEOUT_S}"


def load_s3(con: duckdb.DuckDBPyConnection) -> None:
    """httpfs, with an S3 secret from the usual AWS variables (none stored in the catalog: each
    process makes its own). httpfs also copies those variables into its settings when it loads,
    where duckdb_settings() and current_setting() would show them: they are emptied, as the secret
    is what DuckDB uses."""
    con.execute("LOAD httpfs")
    secret = s3_secret_sql()
    if secret:
        con.execute(secret)
    for setting in ("s3_access_key_id", "s3_secret_access_key", "s3_session_token"):
        con.execute(f"SET {setting} = ''")


def s3_secret_sql() -> str | None:
    """A DuckDB S3 secret from the usual AWS variables. AWS_ENDPOINT_URL names an S3-compatible
    server (MinIO, moto, Ceph)."""
    key, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if not key or not secret:
        return None
    parts = [f"KEY_ID {sql_literal(key)}", f"SECRET {sql_literal(secret)}", f"REGION {sql_literal(s3_region())}"]
    if os.environ.get("AWS_SESSION_TOKEN"):
        parts.append(f"SESSION_TOKEN {sql_literal(os.environ['AWS_SESSION_TOKEN'])}")
    endpoint = s3_endpoint()
    if endpoint:
        host = re.sub(r"^\w+://", "", endpoint).rstrip("/")
        parts += [f"ENDPOINT {sql_literal(host)}", "URL_STYLE 'path'",
                  f"USE_SSL {'true' if endpoint.startswith('https') else 'false'}"]
    return f"CREATE OR REPLACE SECRET iwh_s3 (TYPE s3, {', '.join(parts)})"


def s3_region() -> str:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"


def s3_endpoint() -> str | None:
    """The URL of an S3-compatible server, when the data is not on AWS."""
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")


def sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _lock_down_lake(con: duckdb.DuckDBPyConnection) -> None:
    """From here on, SQL reads the lake and nothing else. Its data files stay readable through
    allowed_directories (which DuckDB also lets COPY write to: a dashboard's own process should
    have read-only access to them, and a read-only PostgreSQL role; docs/team.md).
    Set after the ATTACH, which needs the extensions and the catalog's connection."""
    (data_path,) = con.execute(
        f"SELECT value FROM __ducklake_metadata_{LAKE}.ducklake_metadata WHERE key = 'data_path'").fetchone()
    con.execute(f"SET allowed_directories = [{sql_literal(data_path)}]")
    con.execute("SET enable_external_access = false")
    con.execute(f"SET memory_limit = {sql_literal(READ_MEMORY)}")
    con.execute("SET lock_configuration = true")


# The DuckDB extensions a lake loads, each from the PyPI package an extra of ours installs
# (pyproject.toml): DuckDB cannot download them here, and loaded by path under their package names
# they lack their entry point.
EXTENSIONS = {"ducklake": ("duckdb_extension_ducklake", "lake"), "postgres_scanner": ("duckdb_extension_postgres", "lake"),
              "httpfs": ("duckdb_extension_httpfs", "s3")}


def need_extra(extra: str, what: str, modules: tuple[str, ...]) -> None:
    """Raise a WarehouseError saying which extra to install when a module `what` needs is missing."""
    missing = [m for m in modules if not _importable(m)]
    if missing:
        raise WarehouseError(f"{what} needs the [{extra}] extra, which is not installed ({', '.join(missing)}): "
                             f"pip install 'inductor-warehouse[{extra}]'")


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # refused by an import hook, or a module set to None
        return False


def need_lake_extras(loc: Location) -> None:
    """A lake's location needs the [lake] extra, and [s3] when its data is in object storage."""
    postgres = loc.catalog.startswith("postgres:")
    need_extra("lake", f"a team lake ({LAKE_PREFIX}...)",
               ("duckdb_extension_ducklake", *(("duckdb_extension_postgres", "psycopg") if postgres else ())))
    if _uses_s3(loc):
        need_extra("s3", "a lake's s3:// data", ("duckdb_extension_httpfs",))


def has_extension(name: str) -> bool:
    return _importable(EXTENSIONS[name][0])


@functools.lru_cache(maxsize=1)
def duckdb_platform() -> str:
    """The platform DuckDB names its extension folders by (`linux_amd64`, `osx_arm64`, ...)."""
    with duckdb.connect(":memory:") as con:
        return con.execute("PRAGMA platform").fetchone()[0]


def extension_directory() -> str:
    """A DuckDB extension directory holding the extensions of the installed `duckdb-extension-*`
    packages under the names DuckDB loads them by; those not installed are left out (need_extra
    says which extra a location needs before it loads them)."""
    import importlib.util

    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "inductor-warehouse" / "duckdb-extensions"
    target = root / f"v{duckdb.__version__}" / duckdb_platform()
    for name, (package, _) in EXTENSIONS.items():
        link = target / f"{name}.duckdb_extension"
        if link.exists():
            continue
        if not _importable(package):
            continue
        spec = importlib.util.find_spec(package)
        (source,) = (Path(spec.submodule_search_locations[0]) / "extensions" / f"v{duckdb.__version__}").glob(
            "*.duckdb_extension")
        target.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=target)) / link.name
        tmp.symlink_to(source)
        os.replace(tmp, link)  # atomic: concurrent processes may make the same link
        tmp.parent.rmdir()
    return str(root)


# ---- writing ------------------------------------------------------------------------------------

class Writer:
    """Write sessions on one warehouse. Each holds the write lock only while it lasts, so readers
    and other writers get in between sessions; a session waits at most `wait` seconds for it.

    A file stays open between sessions while no one waits for it: a checkpoint per session would
    rewrite the row groups and long texts each one touched, again and again. A thread watches for
    someone waiting while the writer is between sessions, and closes the file for them."""

    def __init__(self, location: str | os.PathLike | Location | None = None, *, wait: float = WRITE_WAIT_S):
        self.location = locate(location)
        self.wait = wait
        self._con: duckdb.DuckDBPyConnection | None = None
        if self.location.is_lake:
            need_lake_extras(self.location)
        self._lock = _LakeLock(self.location, wait) if self.location.is_lake else None
        self._migrated = False
        self.applied: list[str] = []  # the migrations the first session applied
        self._intent = None  # a held file's intent lock
        self._busy = threading.Lock()  # held by a session, and by the watcher while it closes the file
        self._watcher: threading.Thread | None = None

    @property
    def is_lake(self) -> bool:
        return self.location.is_lake

    @contextlib.contextmanager
    def session(self):
        """A connection holding the write lock; a failure of the warehouse itself (a full disk, a
        lost catalog) leaves it as a WarehouseError that says what happened to what."""
        try:
            with self._session() as con:
                yield con
        except duckdb.Error as e:
            raise WarehouseError(write_failure(self.location, e)) from e

    @contextlib.contextmanager
    def _session(self):
        if self._lock is None:
            with self._busy:
                con = self._hold_file()
                try:
                    self._migrate(con)
                    yield con
                except BaseException:
                    with contextlib.suppress(duckdb.Error):
                        self._release_file()  # after a failure, start afresh
                    raise
                if _someone_waits(self.location):
                    self._release_file()
            self._watch()
            return
        with self._lock:
            if self._con is None:
                self._con = connect(self.location, migrate_schema=False)
            self._migrate(self._con)
            yield self._con

    def _hold_file(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            deadline = time.monotonic() + self.wait
            with _waiting(self.location) as waiting:
                intent = _flock(_intent_file(self.location), fcntl.LOCK_EX, deadline,
                                f"another writer held {self.location.shown} for {self.wait:.0f} s", waiting)
                try:
                    con = _open_file(self.location, False, max(0.0, deadline - time.monotonic()), {})
                    quiet(con)
                    con.execute(f"SET checkpoint_threshold = '{HELD_CHECKPOINT_THRESHOLD}'")
                except BaseException:
                    if intent is not None:
                        intent.close()
                    raise
            self._con, self._intent = con, intent
        return self._con

    def _release_file(self) -> None:
        con, intent, self._con, self._intent = self._con, self._intent, None, None
        try:
            if con is not None:
                con.close()
        finally:
            if intent is not None:
                intent.close()

    def _watch(self) -> None:
        """Between sessions, close the held file as soon as someone waits for it."""
        if self._con is None or (self._watcher is not None and self._watcher.is_alive()):
            return

        def watch():
            while True:
                time.sleep(WATCH_S)
                with self._busy:
                    if self._con is None:
                        return
                    if _someone_waits(self.location):
                        with contextlib.suppress(duckdb.Error):
                            self._release_file()
                        return

        self._watcher = threading.Thread(target=watch, name="iwh-writer-watch", daemon=True)
        self._watcher.start()

    def _migrate(self, con: duckdb.DuckDBPyConnection) -> None:
        if not self._migrated:
            self.applied = migrate(con)
            self._migrated = True

    def close(self) -> None:
        if self._lock is None:
            with self._busy:
                try:
                    self._release_file()  # the checkpoint: what the sessions wrote goes into the file
                except duckdb.Error as e:
                    raise WarehouseError(write_failure(self.location, e)) from e
            return
        if self._con is not None:
            self._con.close()
            self._con = None
        self._lock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _LakeLock:
    """The lake's write lock, which every location reaching the lake takes, however it is spelled
    (keys in another order, another host name, another role): a PostgreSQL session-level advisory
    lock in the catalog's database, keyed by the lake's id (`lake_id`), released by PostgreSQL when
    a killed writer's session ends; or a file lock beside a file catalog's real path. Concurrent
    DuckLake commits to the same tables conflict and two writers of one run would both insert it:
    one writer commits at a time, while all of them parse. Keyed by the location's text, two
    spellings of one lake each took "the" lock, and 43 runs ingested by both made 81 rows."""

    def __init__(self, loc: Location, wait: float):
        self.loc, self.wait = loc, wait
        self.key: int | None = None
        self._pg = None
        self._file = None

    def __enter__(self):
        deadline = time.monotonic() + self.wait
        if not self.loc.catalog.startswith("postgres:"):
            self._wait_for(self._try_file, deadline)
            return self
        import psycopg

        try:
            if self.key is None:
                self.key = _advisory_key(self._lake_id(deadline))
            self._wait_for(lambda: self._try_advisory(self.key), deadline)
        except psycopg.Error as e:
            raise WarehouseError(f"cannot take the write lock of {self.loc.shown} in its catalog: "
                                 f"{redact(str(e)).strip()} (docs/team.md says which role owns what)") from e
        return self

    def _wait_for(self, take, deadline: float) -> None:
        pause = 0.02
        while not take():
            if time.monotonic() >= deadline:
                raise WarehouseError(f"another writer held {self.loc.shown} for {self.wait:.0f} s; "
                                     "try again, or wait longer with --wait")
            time.sleep(pause)
            pause = min(pause * 1.5, 0.5)

    def _session(self):
        if self._pg is None:
            import psycopg

            try:
                self._pg = psycopg.connect(with_connect_timeout(self.loc.catalog[len("postgres:"):]), autocommit=True)
            except psycopg.Error as e:
                raise WarehouseError(f"cannot reach the lake's catalog {self.loc.shown}: {redact(str(e))}") from e
        return self._pg

    def _try_advisory(self, key: int) -> bool:
        return bool(self._session().execute("SELECT pg_try_advisory_lock(%s)", [key]).fetchone()[0])

    def _lake_id(self, deadline: float) -> str:
        """The lake's id, given to it by the first writer that finds none (the lake's maker, or the
        first writer of a lake made before ids): under a lock of the catalog's database (advisory
        locks are the database's own), which also keeps two makers of a new lake apart."""
        found = _read_lake_id(self._session())
        if found:
            return found
        self._wait_for(lambda: self._try_advisory(_MAKER_KEY), deadline)
        try:
            found = _read_lake_id(self._session())
            if found:
                return found
            if found is None:  # no lake in this database yet: DuckLake makes its catalog when attached
                _open_lake(self.loc, read_only=False).close()
            made = uuid.uuid4().hex
            self._session().execute("INSERT INTO ducklake_metadata (key, value) VALUES (%s, %s)", [LAKE_ID_KEY, made])
            return made
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

    def __exit__(self, *exc):
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


# the lake's id: a key of DuckLake's own ducklake_metadata (which keeps keys it does not know, and
# lists them in ducklake_options()), so that it lives in the catalog with the lake it names
LAKE_ID_KEY = "iwh_lake_id"


def _advisory_key(name: str) -> int:
    return int.from_bytes(hashlib.blake2b(f"iwh-writer:{name}".encode(), digest_size=8).digest(), "big", signed=True)


_MAKER_KEY = _advisory_key("")  # held only while a lake is made or given its id


def _read_lake_id(pg) -> str | None:
    """The id in the catalog's database; "" for a lake without one, None where no lake is."""
    import psycopg

    try:
        row = pg.execute("SELECT value FROM ducklake_metadata WHERE key = %s", [LAKE_ID_KEY]).fetchone()
    except psycopg.errors.UndefinedTable:
        return None
    return row[0] if row else ""


# ---- the schema ---------------------------------------------------------------------------------

def is_lake(con: duckdb.DuckDBPyConnection) -> bool:
    return con.execute("SELECT type FROM duckdb_databases() WHERE database_name = current_database()"
                       ).fetchone()[0] == "ducklake"


def migrate(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Apply pending migrations and refresh views; return the names of migrations applied."""
    lake = is_lake(con)
    have = {r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database()").fetchall()}
    if "runs" not in have and "_migrations" not in have:
        return _create_current_schema(con, lake)
    applied = _apply_migrations(con, lake)
    _create_views(con)
    fill_rollups(con)
    return applied


def _apply_migrations(con: duckdb.DuckDBPyConnection, lake: bool) -> list[str]:
    """The migrations `_migrations` does not list, each in a transaction of its own."""
    con.execute(f"CREATE TABLE IF NOT EXISTS _migrations (name VARCHAR{'' if lake else ' PRIMARY KEY'}, applied_at TIMESTAMP)")
    done = {r[0] for r in con.execute("SELECT name FROM _migrations").fetchall()}
    applied = []
    for path in migration_files():
        if path.stem in done:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(path.read_text())
            con.execute("INSERT INTO _migrations VALUES (?, now())", [path.stem])
            con.execute("COMMIT")
        except Exception:
            rollback(con)
            raise
        applied.append(path.stem)
    return applied


def fill_rollups(con: duckdb.DuckDBPyConnection, run_ids: list[str] | None = None) -> None:
    """Sum the runs' rows into run_rollups (views/15_run_rollups_of.sql): the given runs, inside
    the caller's transaction, or every run without a rollup (a warehouse written before them)."""
    if run_ids is not None:
        # with the run's key (migration 0011), as every row of a run
        con.execute("INSERT INTO run_rollups BY NAME SELECT u.*, r.run_key FROM run_rollups_of(?) u "
                    "JOIN runs r USING (run_id)", [run_ids])
        con.execute("INSERT INTO run_tallies BY NAME SELECT t.*, r.run_key FROM run_tallies_of(?) t "
                    "JOIN runs r USING (run_id)", [run_ids])
        con.execute("INSERT INTO inductor_configs SELECT config_hash, any_value(text) FROM run_configs_of(?) "
                    "WHERE config_hash NOT IN (SELECT config_hash FROM inductor_configs) GROUP BY config_hash",
                    [run_ids])
        return
    missing = [r for (r,) in con.execute(
        "SELECT run_id FROM runs WHERE run_id NOT IN (SELECT run_id FROM run_rollups)").fetchall()]
    if missing:
        con.execute("BEGIN TRANSACTION")
        try:
            # a migration that drops rollups to have them made again leaves the runs' tallies
            con.execute("DELETE FROM run_tallies WHERE run_id IN (SELECT unnest(?))", [missing])
            fill_rollups(con, missing)
            con.execute("COMMIT")
        except Exception:
            rollback(con)
            raise


def current_tables() -> list[tuple[str, str]]:
    """(table, CREATE TABLE statement) of the current schema, by table name (current.sql)."""
    return [(_CREATED.match(ddl)[1], ddl) for ddl in _current_ddl()]


def migrated_tables() -> list[tuple[str, str]]:
    """(table, CREATE TABLE statement) of what every migration leaves, by table name: what
    current.sql must hold."""
    mem = duckdb.connect()
    try:
        _apply_migrations(mem, lake=False)
        _create_views(mem)
        return mem.execute("SELECT table_name, sql FROM duckdb_tables() ORDER BY table_name").fetchall()
    finally:
        mem.close()


def current_sql() -> str:
    """current.sql's text, made from the migrations: each table a statement, a column a line."""
    head = ("-- The schema a new warehouse is made with: the tables every migration in migrations/ leaves.\n"
            "-- Generated by `make schema`; do not edit (add a migration). tests/test_warehouse_tables.py\n"
            "-- checks that it is current.\n")
    return head + "".join(f"\n{_one_column_a_line(ddl)}\n" for _, ddl in migrated_tables())


def write_current_sql() -> None:
    CURRENT.write_text(current_sql())


_CREATED = re.compile(r"CREATE TABLE (\w+)\(")


@functools.cache
def _current_ddl() -> tuple[str, ...]:
    text = "\n".join(line for line in CURRENT.read_text().splitlines() if not line.startswith("--"))
    return tuple(ddl.strip() + ";" for ddl in text.split(";\n") if ddl.strip())


def _one_column_a_line(ddl: str) -> str:
    """`CREATE TABLE t(a X, b Y);` with each column (or constraint) on a line of its own: split at
    the commas outside parentheses and quotes."""
    head, body = ddl[: ddl.index("(") + 1], ddl[ddl.index("(") + 1 : ddl.rindex(")")]
    parts, depth, quote, start = [], 0, None, 0
    for i, c in enumerate(body):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(body[start:i].strip())
            start = i + 1
    parts.append(body[start:].strip())
    return head + "\n" + ",\n".join(f"    {p}" for p in parts) + "\n);"


def _create_current_schema(con: duckdb.DuckDBPyConnection, lake: bool) -> list[str]:
    """A new warehouse at the current schema in one transaction: its tables, the migrations recorded
    as applied, the views. Made migration by migration, a new file took 70 ms (11 migrations, each
    its own commit), a fifth of a small ingest's start. DuckLake keeps no key constraints:
    uniqueness is the loader's (runs are replaced whole, kernel sources inserted once, under the
    write lock)."""
    con.execute("BEGIN TRANSACTION")
    try:
        for _, ddl in current_tables():
            con.execute(re.sub(r"\s+PRIMARY KEY\b", "", ddl) if lake else ddl)
        con.execute("INSERT INTO _migrations SELECT unnest(?), now()", [[p.stem for p in migration_files()]])
        _write_views(con, *_view_texts())
        con.execute("COMMIT")
    except Exception:
        rollback(con)
        raise
    return [p.stem for p in migration_files()]


def _create_views(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)create the views and macros when their files changed since this warehouse last got them
    (their hash is kept in `_views`, written in the transaction that writes them): no write at all
    on a writer's open otherwise, and no listing of the views and macros (20 ms, DuckDB lists every
    built-in function to find the macros)."""
    con.execute("CREATE TABLE IF NOT EXISTS _views (digest VARCHAR)")
    if _views_digest_current(con):
        return
    texts, digest = _view_texts()
    con.execute("BEGIN TRANSACTION")
    try:
        _write_views(con, texts, digest)
        con.execute("COMMIT")
    except Exception:
        rollback(con)
        raise


def _view_texts() -> tuple[list[str], str]:
    texts = [path.read_text() for path in view_files()]
    return texts, hashlib.blake2b("\0".join(texts).encode(), digest_size=16).hexdigest()


def _write_views(con: duckdb.DuckDBPyConnection, texts: list[str], digest: str) -> None:
    for text in texts:
        con.execute(text)
    con.execute("DELETE FROM _views")
    con.execute("INSERT INTO _views VALUES (?)", [digest])


_DEFINED = re.compile(r"CREATE OR REPLACE (?:VIEW|MACRO) (\w+)", re.IGNORECASE)


def _check_current(con: duckdb.DuckDBPyConnection, loc: Location) -> None:
    # every read opens the warehouse: the views' digest answers in 1 ms where listing the
    # views and macros takes 40 (a dashboard page opens it once per query)
    pending = _pending_migrations(con) + ([] if _views_digest_current(con) else _missing_views(con))
    if pending:
        raise WarehouseError(
            f"The warehouse {loc.shown} predates this version ({', '.join(pending)} missing); "
            "run any `iwh ingest` on it, or `iwh migrate`, to upgrade it in place."
        )


@functools.cache
def _current_views_digest() -> str:
    return _view_texts()[1]


def _views_digest_current(con: duckdb.DuckDBPyConnection) -> bool:
    """The warehouse's views were written from this version's view files (writers keep the digest)."""
    try:
        return bool(con.execute("SELECT count(*) FROM _views WHERE digest = ?", [_current_views_digest()]).fetchone()[0])
    except duckdb.CatalogException:
        return False


def _missing_views(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Views and macros the view files define that the warehouse lacks (writers make them)."""
    have = {r[0] for r in con.execute(
        "SELECT view_name FROM duckdb_views() WHERE database_name = current_database() UNION "
        "SELECT function_name FROM duckdb_functions() WHERE function_type IN ('macro', 'table_macro') "
        "AND database_name = current_database()").fetchall()}
    return [name for path in view_files() for name in _DEFINED.findall(path.read_text()) if name not in have]


def _pending_migrations(con: duckdb.DuckDBPyConnection) -> list[str]:
    try:
        done = {r[0] for r in con.execute("SELECT name FROM _migrations").fetchall()}
    except duckdb.CatalogException:
        done = set()
    return [p.stem for p in migration_files() if p.stem not in done]
