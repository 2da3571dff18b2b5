"""A DuckLake team warehouse: its catalog (PostgreSQL, or a file) attached in an in-memory DuckDB,
its data in a folder or S3-compatible storage. Its write lock is the protocol's (protocol.py)."""

from __future__ import annotations

import os
import uuid
from typing import TYPE_CHECKING

import duckdb

from inductor_warehouse.store.connection import Config, quiet, sql_literal, with_own_secrets
from inductor_warehouse.store.errors import WarehouseError, first_line
from inductor_warehouse.store.grants import permission_problem
from inductor_warehouse.store.extensions import extension_directory, has_extension, load_s3, need_extra
from inductor_warehouse.store.location import (LAKE_PREFIX, BadConnectionString, Location, conninfo, redact,
                                               split_password)

if TYPE_CHECKING:
    import psycopg
    from psycopg.rows import TupleRow

LAKE = "wh"  # the alias a lake is attached under; `USE wh` makes its tables the unqualified ones
# the lake's id: a key of DuckLake's own ducklake_metadata (which keeps keys it does not know, and
# lists them in ducklake_options()), so that it lives in the catalog with the lake it names
LAKE_ID_KEY = "iwh_lake_id"
CONNECT_TIMEOUT_S = 10  # libpq waits for a catalog server that does not answer forever, unless told


def open_lake(loc: Location, read_only: bool, config: Config | None = None) -> duckdb.DuckDBPyConnection:
    need_lake_extras(loc)
    con = duckdb.connect(":memory:", config=with_own_secrets({"extension_directory": extension_directory(),
                                                              "autoinstall_known_extensions": False, **(config or {})}))
    try:
        quiet(con)
        attach_lake(con, loc, LAKE, read_only)
        con.execute(f"USE {LAKE}")
    except duckdb.Error as e:
        con.close()
        raise WarehouseError(_lake_problem(loc, e)) from e
    return con


def attach_lake(con: duckdb.DuckDBPyConnection, loc: Location, alias: str, read_only: bool) -> None:
    """The lake at `loc` attached under `alias`, with the extensions it needs loaded (from the
    connection's extension directory)."""
    for ext in ("ducklake", "postgres") if loc.catalog.startswith("postgres:") else ("ducklake",):
        con.execute(f"LOAD {ext}")
    # (a reader does not know where the data is before the ATTACH: with AWS keys, it may be S3)
    if _uses_s3(loc) or (os.environ.get("AWS_ACCESS_KEY_ID") and has_extension("httpfs")):
        load_s3(con)
    options = ["READ_ONLY"] if read_only else ["DATA_INLINING_ROW_LIMIT 0"]
    if loc.data_path and not read_only:
        options.append(f"DATA_PATH {sql_literal(loc.data_path)}")
    target, secret = _attach_target(con, loc, alias, options)
    try:
        con.execute(f"ATTACH {sql_literal(target)} AS {alias} ({', '.join(options)})")
    finally:
        if secret:  # the catalog's connections keep what they were opened with; no SQL sees it again
            con.execute(f"DROP SECRET IF EXISTS {secret}")


def _attach_target(con: duckdb.DuckDBPyConnection, loc: Location, alias: str, options: list[str]) -> tuple[str, str | None]:
    """What to ATTACH for the lake at `loc` under `alias`, and the secret made for it. A URI is made a
    `key=value` connection string (DuckDB adds a secret's password to it as one more key). A PostgreSQL
    catalog is given a DuckDB secret of its own (added to `options`), holding the location's password
    if it has one, and dropped once attached: DuckDB lists an attached database's path in
    duckdb_databases(), its allowed paths in duckdb_settings() and a secret in duckdb_secrets(); and
    without a secret named, DuckDB looks for a default one among the persistent secrets, which a
    reader does not load (bounds.READER_CONFIG)."""
    catalog, secret = loc.catalog, None
    if catalog.startswith("postgres:"):
        try:
            info, password = split_password(with_connect_timeout(conninfo(catalog[len("postgres:"):])))
        except BadConnectionString as e:  # as libpq would refuse it, among DuckDB's errors of the ATTACH
            raise duckdb.InvalidInputException(str(e)) from None
        secret = f"{alias}_catalog"
        holds = "" if password is None else f", PASSWORD {sql_literal(password)}"
        con.execute(f"CREATE OR REPLACE TEMPORARY SECRET {secret} (TYPE postgres{holds})")
        options.append(f"METADATA_PARAMETERS MAP {{'SECRET': {sql_literal(secret)}}}")
        catalog = "postgres:" + info
    return "ducklake:" + catalog, secret


def _lake_problem(loc: Location, e: Exception) -> str:
    denied = permission_problem(loc, e, write=False)
    if denied:
        return f"cannot open the lake {loc.printable}: {denied}"
    text = redact(first_line(e))
    if "data_path is not set" in text:
        return (f"{loc.printable} is a new lake: say where its data goes once, with --data-path DIR or "
                "s3://bucket/prefix (or IWH_DATA_PATH).")
    if "creating a new DuckLake is explicitly disabled" in text or "does not exist" in text:
        return (f"No warehouse at {loc.printable} ({text}). Create the PostgreSQL database, then "
                "`iwh ingest PATH --db LOCATION --data-path DIR` makes the lake.")
    return f"cannot open the lake {loc.printable}: {text}"


def _uses_s3(loc: Location) -> bool:
    return (loc.data_path or "").startswith("s3://")


def with_connect_timeout(text: str) -> str:
    """A libpq connection string (`k=v ...` or a URI) that gives up connecting after
    CONNECT_TIMEOUT_S, unless it says otherwise."""
    if "connect_timeout" in text:
        return text
    if "://" in text:
        return f"{text}{'&' if '?' in text else '?'}connect_timeout={CONNECT_TIMEOUT_S}"
    return f"{text} connect_timeout={CONNECT_TIMEOUT_S}"


def need_lake_extras(loc: Location) -> None:
    """A lake's location needs the [lake] extra, and [s3] when its data is in object storage."""
    postgres = loc.catalog.startswith("postgres:")
    need_extra("lake", f"a team lake ({LAKE_PREFIX}...)",
               ("duckdb_extension_ducklake", *(("duckdb_extension_postgres", "psycopg") if postgres else ())))
    if _uses_s3(loc):
        need_extra("s3", "a lake's s3:// data", ("duckdb_extension_httpfs",))


def read_lake_id(pg: psycopg.Connection[TupleRow]) -> str | None:
    """The lake's id in its PostgreSQL catalog (a psycopg connection); "" for a lake without one,
    None where the database holds no lake."""
    import psycopg

    try:
        row = pg.execute("SELECT value FROM ducklake_metadata WHERE key = %s", [LAKE_ID_KEY]).fetchone()
    except psycopg.errors.UndefinedTable:
        return None
    return row[0] if row else ""


def make_lake_id(pg: psycopg.Connection[TupleRow], loc: Location) -> str:
    """Give the lake at `loc` its id, making the lake first where the database holds none (DuckLake
    makes its catalog when attached); only under the lock that keeps makers apart (LakeLock)."""
    if read_lake_id(pg) is None:
        open_lake(loc, read_only=False).close()
    made = uuid.uuid4().hex
    pg.execute("INSERT INTO ducklake_metadata (key, value) VALUES (%s, %s)", [LAKE_ID_KEY, made])
    return made
