"""A canned query's rows as dicts, for the analyses that walk them in Python."""

from __future__ import annotations

from inductor_warehouse.schema import queries as canned


def run_query(con, name: str, **params) -> list[dict]:
    """A canned query as a list of dicts, on a raw connection or a Warehouse."""
    result = canned.run(getattr(con, "con", con), name, params)
    cols = [d[0] for d in result.description]
    return [dict(zip(cols, row, strict=True)) for row in result.fetchall()]
