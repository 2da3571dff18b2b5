"""Printing result frames: an aligned table for people, CSV or JSON for scripts."""

from __future__ import annotations

import re
import sys

import orjson
import polars as pl

FORMATS = ("table", "csv", "json")
MAX_CELL = 60


def emit(df: pl.DataFrame, fmt: str = "table", out=None) -> None:
    out = out or sys.stdout
    if fmt == "csv":
        out.write(_flat(df).write_csv())
    elif fmt == "json":
        out.write(orjson.dumps(df.to_dicts(), default=str, option=orjson.OPT_INDENT_2).decode() + "\n")
    elif fmt == "markdown":
        out.write(markdown(df))
    else:
        out.write(table(df))


def _flat(df: pl.DataFrame) -> pl.DataFrame:
    """CSV cells are plain: lists and structs become their JSON text."""
    nested = [n for n, t in df.schema.items() if isinstance(t, (pl.List, pl.Struct, pl.Array, pl.Object))]
    if not nested:
        return df
    return df.with_columns(
        pl.Series(n, [None if v is None else orjson.dumps(v, default=str).decode() for v in df[n].to_list()],
                  dtype=pl.String)
        for n in nested
    )


# a text cell that reads as a number (`+3`, `-11.9%`, `1,234`): aligned right as numbers are
_NUMBER_TEXT = re.compile(r"^[-+]?[0-9][0-9,]*(\.[0-9]+)?%?$")


def _cell(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))  # a count summed as a float is still a count
        return f"{v:.4g}" if abs(v) < 1e4 else f"{v:,.1f}"
    s = v if isinstance(v, str) else (orjson.dumps(v, default=str).decode() if isinstance(v, (list, dict)) else str(v))
    s = s.replace("\n", "\\n")
    return s if len(s) <= MAX_CELL else s[: MAX_CELL - 1] + "…"


def _cells(df: pl.DataFrame) -> tuple[list[str], list[list[str]]]:
    head = list(df.columns)
    rows = [[_cell(v) for v in row] for row in df.iter_rows()]
    return head, rows


def table(df: pl.DataFrame) -> str:
    head, rows = _cells(df)
    if not head:
        return "(no columns)\n"
    numeric = [df.schema[c].is_numeric() or (df.schema[c] == pl.String and any(r[i] for r in rows)
                                             and all(not r[i] or _NUMBER_TEXT.match(r[i]) for r in rows))
               for i, c in enumerate(head)]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(head)]

    def fmt(cells):
        return "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)).rstrip()

    lines = [fmt(head), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in rows]
    if not rows:
        lines.append("(no rows)")
    return "\n".join(lines) + "\n"


def markdown(df: pl.DataFrame) -> str:
    head, rows = _cells(df)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"
