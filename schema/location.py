"""Where a warehouse lives, named by one string, the same for every command, the Python API and the
dashboards (`--db`, `$IWH_DB`):

    warehouse.duckdb                                   the embedded default: one DuckDB file
    ducklake:postgres:dbname=iwh host=db.internal user=iwh
                                                       a DuckLake: PostgreSQL catalog (a libpq
                                                       connection string), Parquet data in a folder
                                                       or S3-compatible storage

A new lake needs to be told where its data goes (`--data-path DIR|s3://bucket/prefix`, or
`$IWH_DATA_PATH`) once, when it is created; the catalog remembers it. Secrets stay out of the
location: PostgreSQL reads its password from `$PGPASSWORD` or `~/.pgpass`, S3 keys come from the
usual `AWS_*` variables. A password written into the location anyway is never printed: `shown`
and `redact` mask it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

DEFAULT = "warehouse.duckdb"
LAKE_PREFIX = "ducklake:"
_PASSWORD = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_URI_PASSWORD = re.compile(r"(://[^:/@\s]+:)[^@\s]+(@)")


@dataclass(frozen=True)
class Location:
    text: str
    data_path: str | None = None  # where a new lake keeps its data files; ignored for files

    @property
    def is_lake(self) -> bool:
        return self.text.startswith(LAKE_PREFIX)

    @property
    def kind(self) -> str:
        return "lake" if self.is_lake else "file"

    @property
    def path(self) -> str:
        """A file warehouse's absolute path."""
        return self.text if self.text == ":memory:" else os.path.abspath(self.text)

    @property
    def catalog(self) -> str:
        """A lake's catalog: what DuckLake's ATTACH takes after `ducklake:` (`postgres:dbname=...`)."""
        return self.text[len(LAKE_PREFIX):]

    @property
    def shown(self) -> str:
        """The location for people and logs, with any password masked."""
        return redact(self.text if self.is_lake else self.path)

    def exists(self) -> bool:
        """A file warehouse exists on disk; a lake is asked when it is attached."""
        return self.is_lake or self.text == ":memory:" or Path(self.text).exists()

    def __str__(self) -> str:
        return self.shown


def locate(text: str | os.PathLike | Location | None = None, data_path: str | None = None) -> Location:
    """The location `text` names, else `$IWH_DB`, else ./warehouse.duckdb."""
    if isinstance(text, Location):
        return text if data_path is None else Location(text.text, data_path)
    return Location(str(text or os.environ.get("IWH_DB") or DEFAULT),
                    data_path or os.environ.get("IWH_DATA_PATH") or None)


def redact(text: str) -> str:
    """`text` with passwords masked: libpq's `password=...` and URIs' `user:secret@`."""
    return _URI_PASSWORD.sub(r"\1***\2", _PASSWORD.sub(r"\1***", text))
