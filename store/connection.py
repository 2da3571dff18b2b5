"""What every warehouse connection gets: no progress bar, and the one way a transaction is written."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, TypeAlias

import duckdb

# a connection's settings, as duckdb.connect takes them
Config: TypeAlias = dict[str, str | bool | int | float | list[str]]
# the values bound to a statement's `?` or `$name` parameters: whatever DuckDB binds (numbers, text,
# lists, NULL), so any value
Params: TypeAlias = dict[str, Any] | list[Any]
# every connection to a warehouse, a writer's too: the secrets it uses are the ones this code makes
# (a lake's S3 keys and catalog password), never the user's persistent DuckDB secrets, whose scope
# could win DuckDB's match for the lake's bucket and write with credentials nobody gave this command
OWN_SECRETS: Config = {"allow_persistent_secrets": False}


def with_own_secrets(config: Config) -> Config:
    return {**OWN_SECRETS, **config}


def quiet(con: duckdb.DuckDBPyConnection) -> None:
    """No progress bar: DuckDB prints one on stdout when a statement runs past 2 s, into the middle
    of `--format json` output."""
    con.execute("SET enable_progress_bar = false")


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN; COMMIT when the block ends, ROLLBACK when it raises (and the error goes on)."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back after a failure, keeping the failure: a failed COMMIT has already rolled back, and
    the ROLLBACK's own error ("no transaction is active") must not hide why."""
    with contextlib.suppress(duckdb.Error):
        con.execute("ROLLBACK")


def one_row(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> tuple[Any, ...]:
    """The row of a statement that returns one (an aggregate, a setting, a pragma)."""
    row = con.execute(sql, params).fetchone()
    if row is None:
        raise LookupError(f"no row from {sql.split()[0]} ...")
    return row


def sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
