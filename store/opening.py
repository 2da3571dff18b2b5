"""Opening a warehouse, for reading or writing, wherever it lives (location.py): a file through the
protocol that lets readers and writers take turns (protocol.py), a lake through its catalog (lake.py).

Readers see a run whole or not at all: every run is written in one transaction. Readers of a file
open it for each query and close it, so a writer gets in between; a lake's readers never block
anyone. A lake's writers must hold its write lock: they open it through `Writer`.
"""

from __future__ import annotations

import os

import duckdb

from inductor_warehouse.store.bounds import lock_down_file, lock_down_lake, reader_config
from inductor_warehouse.store.connection import quiet
from inductor_warehouse.store.errors import WarehouseError, cut_short, unreadable
from inductor_warehouse.store.lake import open_lake
from inductor_warehouse.store.location import Location, locate
from inductor_warehouse.store.migrate import check_current, migrate
from inductor_warehouse.store.protocol import Kept, open_file


def connect(location: str | os.PathLike[str] | Location | None = None, *, read_only: bool = False,
            wait: float | None = None, lockdown: bool = False, migrate_schema: bool = True,
            keep_open: bool = False, memory: str | None = None) -> duckdb.DuckDBPyConnection:
    """Open the warehouse at `location`: read-only, or for writing (created and migrated, its rollups
    made again where a migration dropped them).

    `wait`: seconds to wait while another process holds a file's lock (default READ_WAIT_S or
    WRITE_WAIT_S). `lockdown` (readers): SQL on the connection can read the warehouse and nothing
    else: no files, no ATTACH, no settings changed, at most `memory` (bounds.read_memory()) of memory.
    `keep_open` (readers of a file that open it for every query, as the dashboard does): the file
    stays open in this process after the connection closes, until a writer waits for it (Kept).
    """
    loc = locate(location)
    if read_only and not loc.exists():
        raise WarehouseError(f"No warehouse at {loc.printable}. Create one with `iwh ingest PATH --db {loc.printable}` "
                             "or point to an existing one with --db or IWH_DB.")
    config = reader_config(loc.is_lake, memory) if lockdown else {}
    if loc.is_lake:
        con = open_lake(loc, read_only, config)
    else:
        con = open_file(loc, read_only, wait, config)
        if lockdown:
            lock_down_file(con)
        else:
            quiet(con)
    try:
        if read_only:
            check_current(con, loc)
        elif migrate_schema:
            migrate(con)
        if lockdown and loc.is_lake:
            lock_down_lake(con, memory)
    except duckdb.IOException as e:
        con.close()
        if not cut_short(loc, e):
            raise
        raise WarehouseError(unreadable(loc, e)) from e
    except BaseException:
        con.close()
        raise
    if keep_open and read_only and not loc.is_lake:
        Kept.hold(loc, config)  # a warehouse found current: one that is not is not kept from its upgrade
    return con


def default_db_path() -> str:
    return locate().text
