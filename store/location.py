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
usual `AWS_*` variables. A password written into the location anyway is never printed: `printable`
and `redact` mask it; and it is handed to DuckDB apart from the location (`split_password`), so no
SQL function that lists databases or settings shows it.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

DEFAULT = "warehouse.duckdb"
LAKE_PREFIX = "ducklake:"
# libpq's `password=value` (spaces around `=` allowed, not line ends), in a connection string or a
# URI's query (`?password=value&...`), in any text that quotes a location
_PASSWORD = re.compile(r"(?P<lead>[?&]?)(?P<key>password[ \t]*=[ \t]*)(?P<value>'(?:[^'\\]|\\.)*'|\S*)",
                       re.IGNORECASE)
# where an unquoted value that a message quoted ends: a closing quote before a space, punctuation
# or the end (`at "host=h password=x": failed`)
_QUOTE_CLOSED = re.compile(r"""["'](?=[\s:,;.)]|$)""")
_URI_PASSWORD = re.compile(r"(://[^:/@\s]+:)[^@\s]+(@)")
# a connection string's own password key (at its start or after a space), for split_password
_CONNINFO_PASSWORD = re.compile(r"(?:^|(?<=\s))password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)\s*", re.IGNORECASE)


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
        """A file warehouse's real path: every spelling of one file (relative, through a symbolic
        link) names the same one, and so shares its locks."""
        return self.text if self.text == ":memory:" else os.path.realpath(self.text)

    @property
    def catalog(self) -> str:
        """A lake's catalog: what DuckLake's ATTACH takes after `ducklake:` (`postgres:dbname=...`)."""
        return self.text[len(LAKE_PREFIX):]

    @property
    def printable(self) -> str:
        """The location for people and logs, with any password masked."""
        return redact(self.text if self.is_lake else self.path)

    def exists(self) -> bool:
        """A file warehouse exists on disk; a lake is asked when it is attached."""
        return self.is_lake or self.text == ":memory:" or Path(self.text).exists()

    def __str__(self) -> str:
        return self.printable


def locate(text: str | os.PathLike | Location | None = None, data_path: str | None = None) -> Location:
    """The location `text` names, else `$IWH_DB`, else ./warehouse.duckdb."""
    if isinstance(text, Location):
        return text if data_path is None else Location(text.text, data_path)
    return Location(str(text or os.environ.get("IWH_DB") or DEFAULT),
                    data_path or os.environ.get("IWH_DATA_PATH") or None)


def redact(text: str) -> str:
    """`text` with passwords masked: libpq's `password=...` and URIs' `user:secret@`; what follows
    a password (the next key, a URI's next parameter, the quote around the location) is kept."""
    return _URI_PASSWORD.sub(r"\1***\2", _PASSWORD.sub(_masked, text))


def _masked(m: re.Match) -> str:
    value, rest = m["value"], ""
    if not value.startswith("'"):
        ends = [e.start() for e in (_QUOTE_CLOSED.search(value), re.search(r"[&#]", value) if m["lead"] else None) if e]
        if ends:
            value, rest = value[:min(ends)], value[min(ends):]
    return f"{m['lead']}{m['key']}***{rest}"


def split_password(conninfo: str) -> tuple[str, str | None]:
    """A libpq connection string (`k=v ...` or a URI) without its password, and the password (None
    when it has none), so that the password reaches the connection apart from the location."""
    m = _CONNINFO_PASSWORD.search(conninfo)
    if m:
        value = m[1]
        if value.startswith("'"):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        return (conninfo[:m.start()] + conninfo[m.end():]).strip(), value
    if "://" not in conninfo:
        return conninfo, None
    uri = urllib.parse.urlsplit(conninfo)
    query = urllib.parse.parse_qsl(uri.query, keep_blank_values=True)
    password = next((v for k, v in query if k == "password"), None)
    if uri.password is not None:
        password = urllib.parse.unquote(uri.password)
    if password is None:
        return conninfo, None
    netloc = uri.netloc.rsplit("@", 1)
    if len(netloc) == 2:
        netloc[0] = netloc[0].split(":", 1)[0]
    uri = uri._replace(netloc="@".join(netloc),
                       query=urllib.parse.urlencode([(k, v) for k, v in query if k != "password"]))
    return urllib.parse.urlunsplit(uri), password
