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
# URI's query (`?password=value&...`), in any text that quotes a location; and SQL's `PASSWORD 'value'`
# (a secret's statement, which DuckDB may quote in an error)
_PASSWORD = re.compile(r"(?P<lead>[?&]?)(?P<key>password[ \t]*=[ \t]*)(?P<value>'(?:[^'\\]|\\.)*'|\S*)",
                       re.IGNORECASE)
_SQL_SECRET = re.compile(r"\b(?P<key>(?:password|secret|session_token)\s+)'(?:[^']|'')*'", re.IGNORECASE)
# where an unquoted value that a message quoted ends: a closing quote before a space, punctuation
# or the end (`at "host=h password=x": failed`)
_QUOTE_CLOSED = re.compile(r"""["'](?=[\s:,;.)]|$)""")
# a URI's `user:secret@`: everything from the user's colon to the last `@` of the line, whatever the
# password holds (`@`, `/`, `:`, quotes and spaces included, which libpq wants percent-encoded)
_URI_PASSWORD = re.compile(r"(://[^:/@\s'\"]*:)[^\n]*(@)")
# a connection string's own password key (at its start or after a space), for split_password
_CONNINFO_PASSWORD = re.compile(r"(?:^|(?<=\s))password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)\s*", re.IGNORECASE)
_URI_SCHEMES = ("postgresql://", "postgres://")


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


def locate(text: str | os.PathLike[str] | Location | None = None, data_path: str | None = None) -> Location:
    """The location `text` names, else `$IWH_DB`, else ./warehouse.duckdb."""
    if isinstance(text, Location):
        return text if data_path is None else Location(text.text, data_path)
    return Location(str(text or os.environ.get("IWH_DB") or DEFAULT),
                    data_path or os.environ.get("IWH_DATA_PATH") or None)


def redact(text: str) -> str:
    """`text` with passwords masked: libpq's `password=...`, URIs' `user:secret@` and a secret's SQL
    (`PASSWORD '...'`); what follows a password (the next key, a URI's next parameter, the quote
    around the location) is kept."""
    text = _SQL_SECRET.sub(lambda m: f"{m['key']}'***'", text)
    return _URI_PASSWORD.sub(r"\1***\2", _PASSWORD.sub(_masked, text))


def _masked(m: re.Match[str]) -> str:
    value, rest = m["value"], ""
    if not value.startswith("'"):
        ends = [e.start() for e in (_QUOTE_CLOSED.search(value), re.search(r"[&#]", value) if m["lead"] else None) if e]
        if ends:
            value, rest = value[:min(ends)], value[min(ends):]
    return f"{m['lead']}{m['key']}***{rest}"


def conninfo(text: str) -> str:
    """A libpq connection string as `key=value ...`, the form every PostgreSQL client of ours takes (DuckDB's
    PostgreSQL extension adds a secret's password to it as one more `key=value`): a URI
    (`postgresql://user:secret@host:port/db?key=value`) is taken apart, its percent-encoded parts
    decoded, and each value quoted where libpq needs it; a connection string is left as it is."""
    if not text.startswith(_URI_SCHEMES):
        return text
    head, _, query = text.split("://", 1)[1].partition("?")
    pairs: list[tuple[str, str]] = []
    if "@" in head:  # the last @ ends the user part: a password written unencoded may hold @ / :
        user_part, head = head.rsplit("@", 1)
        user, colon, password = user_part.partition(":")
        pairs += [("user", _unquote(user))] if user else []
        pairs += [("password", _unquote(password))] if colon else []
    hosts, _, dbname = head.partition("/")
    names, ports = [], []
    for spec in hosts.split(",") if hosts else []:
        if spec.startswith("["):  # [IPv6]:port
            host, _, port = spec[1:].partition("]")
            port = port.removeprefix(":")
        else:
            host, _, port = spec.partition(":")
        names.append(_unquote(host))
        ports.append(port)
    pairs += [("host", ",".join(names))] if any(names) else []
    pairs += [("port", ",".join(ports))] if any(ports) else []
    pairs += [("dbname", _unquote(dbname))] if dbname else []
    for item in query.split("&") if query else []:
        key, _, value = item.partition("=")
        pairs.append((_unquote(key), _unquote(value)))
    return " ".join(f"{k}={_quoted(v)}" for k, v in pairs)


def _unquote(part: str) -> str:
    return urllib.parse.unquote(part)  # not unquote_plus: libpq reads `+` as itself


def _quoted(value: str) -> str:
    """A connection string's value, in single quotes (with \\ and \\' escaped) when libpq needs them."""
    if value and not re.search(r"[\s'\\]", value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def split_password(text: str) -> tuple[str, str | None]:
    """A libpq connection string (`k=v ...`, or a URI made one by `conninfo`) without its password,
    and the password (None when it has none), so that the password reaches the connection apart
    from the location."""
    text = conninfo(text)
    m = _CONNINFO_PASSWORD.search(text)
    if not m:
        return text, None
    value = m[1]
    if value.startswith("'"):
        value = re.sub(r"\\(.)", r"\1", value[1:-1])
    return (text[:m.start()] + text[m.end():]).strip(), value
