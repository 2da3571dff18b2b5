"""What a PostgreSQL role lacks on a lake's catalog, said so that it can be granted: DuckLake reports a
refused write only as "Failed to commit DuckLake transaction", with PostgreSQL's "permission denied
for table ducklake_snapshot" at the end of the failed statements it quotes. This module finds
PostgreSQL's cause in DuckDB's error, asks the catalog which role was refused what (the login role
may act as another: `ALTER ROLE ... SET role`), and says which GRANT lets it (docs/team.md).
"""

from __future__ import annotations

import re
from typing import TypedDict

from inductor_warehouse.store.location import Location, conninfo

_DENIED = re.compile(r"permission denied for (?P<what>table|schema|database|sequence) \"?(?P<name>[\w$]+)\"?", re.I)
# the statement of the failed batch that touched the table: its verb is the privilege lacking
_VERBS = {"INSERT INTO": "INSERT", "UPDATE": "UPDATE", "DELETE FROM": "DELETE"}
WRITE_PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE")
CONNECT_TIMEOUT_S = 10


class _Facts(TypedDict, total=False):
    """What the catalog said about the refused role; a key it could not be asked is absent."""
    role: str
    database: str
    owner: str | None
    missing: set[str]


def permission_problem(loc: Location, e: BaseException, write: bool) -> str | None:
    """The words for a lake's catalog refusing its role (None when `e` is not that): the role, the
    privilege and the object, and the GRANT that lets the role read (`write`: write) the lake."""
    text = str(e)
    m = _DENIED.search(text)
    if not m or not loc.is_lake or not loc.catalog.startswith("postgres:"):
        return None
    what, name = m["what"].lower(), m["name"]
    privilege = _privilege(text[:m.start()], name) if what == "table" else "USAGE" if what == "schema" else "CONNECT"
    facts = _ask(loc, name if what == "table" else None, WRITE_PRIVILEGES if write else ("SELECT",))
    role, owner = facts.get("role", "of this location"), facts.get("owner")
    database = facts.get("database", "of the lake's catalog")
    lacking = f"{privilege} on {what} {name}"
    others = sorted(p for p in facts.get("missing", ()) if p != privilege)
    if others:
        lacking += f" (and {', '.join(others)} on the lake's other tables)"
    by = f"as {owner} (the tables' owner) or a superuser" if owner else "as the lake's owner or a superuser"
    if write:
        fix = (f"A writer needs SELECT, INSERT, UPDATE and DELETE on the lake's tables: ingest as a writer's role, "
               f"or, {by}, let {role} write: GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}"
               + (f" (or make it act as the owner, as docs/team.md's writers do: GRANT {owner} TO {role}; "
                  f"ALTER ROLE {role} SET role = '{owner}')" if owner else ""))
    else:
        fix = (f"A reader needs USAGE on the schema and SELECT on the lake's tables; {by}, run: "
               f"GRANT USAGE ON SCHEMA public TO {role}; GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role} "
               "(in each lake's database: default privileges are per database, docs/team.md)")
    return f"PostgreSQL role {role} lacks {lacking} in database {database}. {fix}."


def _privilege(before: str, table: str) -> str:
    """The verb of the last statement before the denial that names `table` (DuckLake quotes them)."""
    found = None
    for m in re.finditer(r"(INSERT INTO|UPDATE|DELETE FROM)\s+(?:\"?\w+\"?\.)?\"?" + re.escape(table) + r"\b", before):
        found = _VERBS[m[1]]
    return found or "SELECT"


def _ask(loc: Location, table: str | None, wanted: tuple[str, ...]) -> _Facts:
    """The role the catalog's session acts as, its database, the owner of `table` (or of the lake's
    tables) and which of the `wanted` privileges the role lacks on them; what cannot be asked is left out."""
    try:
        import psycopg

        with psycopg.connect(conninfo(loc.catalog[len("postgres:"):]), connect_timeout=CONNECT_TIMEOUT_S,
                             autocommit=True) as pg:
            row = pg.execute("SELECT current_user, current_database()").fetchone()
            assert row is not None, "a SELECT without FROM returns one row"
            role, database = row
            rows = pg.execute(
                "SELECT c.relname, pg_get_userbyid(c.relowner), "
                + ", ".join(f"has_table_privilege(c.oid, '{p}')" for p in WRITE_PRIVILEGES)
                + " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                  "WHERE c.relkind = 'r' AND c.relname LIKE 'ducklake%' AND n.nspname = current_schema()").fetchall()
    except Exception:  # a diagnosis: without it, the words from the error alone
        return {}
    owner = next((r[1] for r in rows if r[0] == table), rows[0][1] if rows else None)
    missing = {p for r in rows for p, ok in zip(WRITE_PRIVILEGES, r[2:], strict=True) if not ok and p in wanted}
    return {"role": role, "database": database, "owner": owner, "missing": missing}

