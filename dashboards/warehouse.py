"""Where the dashboards' warehouse is and how a page reads it: the read-only SQLAlchemy connection
through `st.connection`, and `read`, the one way a page's work reaches the DuckDB connection under
it (bounded in time, closed after)."""

from __future__ import annotations

import hashlib
import os
import sys

import streamlit as st
from sqlalchemy import event

from duckdb_engine import ConnectionWrapper
from duckdb_engine import Dialect as DuckDBDialect
from sqlalchemy.pool import NullPool

from inductor_warehouse.store.bounds import Stuck, let_go, run_bounded, run_typed
from inductor_warehouse.store.location import Location, locate
from inductor_warehouse.store.opening import connect

CACHE_SECONDS = 300


def location() -> Location:
    """The warehouse: `streamlit run app.py -- PATH`, else $IWH_DB, else ./warehouse.duckdb."""
    # argv is the app's own only under `streamlit run` (under pytest it is pytest's)
    if os.path.basename(sys.argv[0]) == "app.py" and len(sys.argv) > 1:
        return locate(sys.argv[1])
    return locate()


def connection():
    """The read-only SQLAlchemy connection, through `st.connection`. Each DuckDB connection under it
    comes from `store.opening.connect` (the CLI's and the API's door too), locked down: even the SQL
    console cannot write, ATTACH, read files or change settings. A file is opened per query and closed
    after it (NullPool), so an ingest can take the file's write lock between queries; the database
    under them stays open in this process until a writer waits for it (`keep_open`), so a query
    neither reopens it nor reads again what the last one read. A lake's connections are pooled, as
    its readers block no one."""
    loc = location()
    digest = hashlib.blake2b(loc.text.encode(), digest_size=6).hexdigest()
    url = "duckdb:///:memory:" if loc.is_lake else f"duckdb:///{loc.path}"
    return st.connection(f"warehouse-{digest}", type="sql", url=url, connect_args={"iwh_location": loc.text},  # type: ignore[call-overload]
                         **({} if loc.is_lake else {"poolclass": NullPool}))


@event.listens_for(DuckDBDialect, "do_connect")
def _open_warehouse(dialect, conn_rec, cargs, cparams):
    """SQLAlchemy asks for a DBAPI connection for `connection()`: the warehouse's own, read-only and
    locked down. (On the dialect class: st.connection makes a new engine when it resets one.)"""
    where = cparams.get("iwh_location")
    if where is None:
        return None
    return ConnectionWrapper(connect(where, read_only=True, lockdown=True, keep_open=True))


def read(work, seconds: float | None = None, typed: tuple[str, dict, int] | None = None):
    """`work(con)` on the DuckDB connection under a pooled SQLAlchemy one, within the time limit
    (bounds.py); or, for a statement someone typed (`typed`: its text, its parameters, the rows to
    keep), its first rows and how many it gave (bounds.run_typed: checked, bound, fetched within the
    time and memory limits). The connection is closed on leaving, not left to the garbage collector:
    a file warehouse stays locked while any connection to it is open, and an ingest waits for that;
    one whose statement did not stop is let go (out of the pool, closed whenever the statement ends)."""
    raw = connection().engine.raw_connection()
    duck = raw.driver_connection
    try:
        if typed is None:
            result = run_bounded(duck, lambda: work(duck), seconds)
        else:
            sql, params, rows = typed
            result = run_typed(duck, sql, seconds, params, max_rows=rows, named_only=True)
    except Stuck:
        raw.detach()
        let_go(raw.close)
        raise
    except BaseException:
        raw.close()
        raise
    raw.close()
    return result
