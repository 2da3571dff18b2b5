"""The canned query library: `queries/<area>/<name>.sql`, one query a file.

Header grammar (leading comment lines):
    -- <title>
    -- @internal <who uses it>          (optional: a query for the pages and commands, not for people)
    -- <more description lines, optional>
    -- @param <name> <TYPE> [default=<value>] <description>
The SQL uses DuckDB named parameters ($name). A parameter not given is NULL (or its default),
so queries write optional filters as `($model IS NULL OR model = $model)`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

QUERIES = Path(__file__).parent / "queries"
PARAM_RE = re.compile(r"^--\s*@param\s+(\w+)\s+(\w+)(?:\s+default=(\S+))?\s*(.*)$")
INTERNAL_RE = re.compile(r"^--\s*@internal\b\s*(.*)$")
TYPES = {"VARCHAR": str, "TEXT": str, "INTEGER": int, "BIGINT": int, "DOUBLE": float, "BOOLEAN": bool}


class QueryError(Exception):
    """A wrong query name or parameter; the message says what exists."""


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    default: str | None
    description: str

    def convert(self, value):
        if value is None or not isinstance(value, str):
            return value
        if value.upper() == "NULL":
            return None
        py = TYPES.get(self.type.upper(), str)
        if py is bool:
            return value.lower() in ("1", "true", "yes", "on")
        try:
            return py(value)
        except ValueError as e:
            raise QueryError(f"parameter {self.name} wants {self.type}, got {value!r}") from e


@dataclass(frozen=True)
class Query:
    name: str  # area/name
    title: str
    description: str
    params: tuple[Param, ...] = field(default_factory=tuple)
    sql: str = ""
    path: Path | None = None
    internal: str | None = None  # who uses it (`iwh queries` leaves it out unless --all)

    @property
    def area(self) -> str:
        return self.name.split("/", 1)[0]

    def bind(self, given: dict) -> dict:
        known = {p.name: p for p in self.params}
        unknown = set(given) - set(known)
        if unknown:
            raise QueryError(
                f"{self.name} has no parameter {', '.join(sorted(unknown))}; "
                f"it takes: {', '.join(known) or 'none'}"
            )
        values = {}
        for p in self.params:
            raw = given.get(p.name, p.default)
            values[p.name] = p.convert(raw)
        # DuckDB rejects named parameters the statement does not use
        return {k: v for k, v in values.items() if re.search(rf"\${k}\b", self.sql)}


def parse_query_file(path: Path, name: str) -> Query:
    text = path.read_text()
    title, desc, params, internal = "", [], [], None
    for line in text.splitlines():
        if not line.startswith("--"):
            break
        m = PARAM_RE.match(line)
        if m:
            params.append(Param(m.group(1), m.group(2), m.group(3), m.group(4).strip()))
        elif m := INTERNAL_RE.match(line):
            internal = m.group(1).strip() or "internal"
        elif not title:
            title = line.lstrip("-").strip()
        else:
            desc.append(line.lstrip("-").strip())
    return Query(name, title, "\n".join(desc).strip(), tuple(params), text, path, internal)


@lru_cache(maxsize=1)
def _library() -> dict[str, Query]:
    out = {}
    for path in sorted(QUERIES.glob("*/*.sql")):
        name = f"{path.parent.name}/{path.stem}"
        out[name] = parse_query_file(path, name)
    return out


def all_queries() -> list[Query]:
    return list(_library().values())


def get(name: str) -> Query:
    lib = _library()
    if name in lib:
        return lib[name]
    matches = [q for q in lib.values() if q.name.split("/", 1)[1] == name]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise QueryError(f"{name} is ambiguous: {', '.join(q.name for q in matches)}")
    raise QueryError(f"no canned query {name!r}; `iwh queries` lists them")


def run(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None) -> duckdb.DuckDBPyConnection:
    """Run the canned query `name` on a DuckDB connection with `params` (one not given is NULL or its
    default) and return the connection, its result ready to fetch (`.fetchall()`, `.pl()`, `.df()`):
    the one way the API, analysis, the CLI and the dashboards run a canned query."""
    q = get(name)
    return con.execute(q.sql, q.bind(params or {}))
