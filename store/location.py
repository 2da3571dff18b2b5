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
# libpq's `password=value`, in a connection string or a URI's query (`?password=value&...`), in any
# text that quotes a location: its value read as libpq reads it (conninfo_parse), single-quoted to the
# closing quote (an unclosed one to the end), else to the next space, a backslash escaping the next
# character in both; and SQL's `PASSWORD 'value'` (a secret's statement, which DuckDB may quote in an error)
_PASSWORD = re.compile(r"(?P<lead>[?&]?)(?P<key>password\s*=\s*)"
                       r"(?P<value>'(?:[^'\\]|\\[\s\S])*(?:'|\\?\Z)|(?:[^ \t\n\v\f\r\\]|\\[\s\S])*\\?)", re.IGNORECASE)
_SQL_SECRET = re.compile(r"\b(?P<key>(?:password|secret|session_token)\s+)'(?:[^']|'')*'", re.IGNORECASE)
# a URI's `user:secret@`: everything from the user's colon to the last `@` of the line, whatever the
# password holds (`@`, `/`, `:`, quotes and spaces included, which libpq wants percent-encoded)
_URI_PASSWORD = re.compile(r"(://[^:/@\s'\"]*:)[^\n]*(@)")
_LIBPQ_SPACE = " \t\n\v\f\r"  # C's isspace, which libpq's parser asks
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
    """The whole value masked, as libpq would read it: a text that quotes a location may end it with
    a quote or a colon, but a password may hold those too. In a URI's query (`?password=...`) the
    value ends at the next parameter, as `&` and `#` are percent-encoded inside one."""
    value, rest = m["value"], ""
    end = re.search(r"[&#]", value) if m["lead"] and not value.startswith("'") else None
    if end:  # the parameters after it may hold another password
        rest = _PASSWORD.sub(_masked, value[end.start():])
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


class BadConnectionString(ValueError):
    """A connection string that libpq would not read; the message holds none of its values."""


def split_password(text: str) -> tuple[str, str | None]:
    """A libpq connection string (`k=v ...`, or a URI made one by `conninfo`) without any password
    key, and the password libpq would use (the last one given; None when there is none), so that the
    password reaches the connection apart from the location."""
    kept, password = [], None
    for key, value, spelled in conninfo_items(conninfo(text)):
        if key == "password":  # libpq's keys are case-sensitive: `PASSWORD=` is refused by it
            password = value
        else:
            kept.append(spelled)
    return " ".join(kept), password


def conninfo_items(text: str) -> list[tuple[str, str, str]]:
    """A `key=value ...` connection string read as libpq reads it (conninfo_parse): (key, value, the
    pair as written) for each pair, in order. Spaces may surround `=`; a value is single-quoted (to
    its closing quote) or runs to the next space; a backslash takes the next character as it is."""
    items: list[tuple[str, str, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _LIBPQ_SPACE:
            i += 1
        if i == n:
            return items
        start = i
        while i < n and text[i] != "=" and text[i] not in _LIBPQ_SPACE:
            i += 1
        key = text[start:i]  # never shown: a stray word may be part of a password
        while i < n and text[i] in _LIBPQ_SPACE:
            i += 1
        if i == n or text[i] != "=":
            raise BadConnectionString('the connection string has a word without "=" after it (libpq reads '
                                      "key=value pairs: single-quote a value that holds spaces)")
        i += 1
        while i < n and text[i] in _LIBPQ_SPACE:
            i += 1
        value, i = _conninfo_value(text, i)
        items.append((key, value, text[start:i]))


def _conninfo_value(text: str, i: int) -> tuple[str, int]:
    """The value that starts at `text[i]`, as libpq reads it, and where the next pair may start."""
    n = len(text)
    quoted = i < n and text[i] == "'"
    i += quoted
    value: list[str] = []
    while True:
        if i >= n:
            if quoted:
                raise BadConnectionString("a value of the connection string has no closing quote")
            return "".join(value), n
        c = text[i]
        if c == "\\":
            value.append(text[i + 1:i + 2])
            i += 2
        elif quoted and c == "'":
            return "".join(value), i + 1
        elif not quoted and c in _LIBPQ_SPACE:
            return "".join(value), i
        else:
            value.append(c)
            i += 1
