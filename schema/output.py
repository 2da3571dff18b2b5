"""Printing result frames: an aligned table for people, CSV or JSON for scripts.

A table fits the terminal (COLUMNS, else the terminal's width; IWH_TABLE_WIDTH for any output; no
limit when the output is not a terminal): the widest text columns narrow and their cells wrap onto more lines, so a workload, a
kernel name or a path is never cut; prose (a reason, a detail) past a few lines ends with `…`.
Rates and shares print as percentages; CSV and JSON keep every value whole, as the warehouse has it.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import textwrap
from datetime import datetime
from itertools import zip_longest

import orjson
import polars as pl

FORMATS = ("table", "csv", "json")
# columns of prose: wrapped to at most PROSE_LINES lines (PROSE_CHARS on one line when nothing bounds
# the width); every other text column is shown whole
PROSE = re.compile(r"(^|_)(reason|detail|details|message|example|headline|text|sql|hint|explanation|labels|how)$")
PROSE_LINES, PROSE_CHARS = 4, 240
# a fraction 0..1 named so: shown as a percentage
RATE = re.compile(r"(^|_)(rate|share)$")
MIN_WIDTH = 8
PROSE_WIDTH = 24  # prose narrows to this before any other column narrows


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


def _cell(v, rate: bool = False) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and rate:
        return f"{100 * v:.1f}%"
    if isinstance(v, datetime):
        return v.isoformat(sep=" ", timespec="seconds")
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))  # a count summed as a float is still a count
        return f"{v:.4g}" if abs(v) < 1e4 else f"{v:,.1f}"
    s = v if isinstance(v, str) else (orjson.dumps(v, default=str).decode() if isinstance(v, (list, dict)) else str(v))
    return s.replace("\n", "\\n")


def _cells(df: pl.DataFrame) -> tuple[list[str], list[list[str]]]:
    head = list(df.columns)
    rates = [bool(RATE.search(c)) and df.schema[c].is_float() for c in head]
    rows = [[_cell(v, r) for v, r in zip(row, rates, strict=True)] for row in df.iter_rows()]
    return head, rows


def terminal_width() -> int | None:
    """The width a table fits: IWH_TABLE_WIDTH, else the terminal's (COLUMNS, else its size); None
    (no limit) when the output is not a terminal (a pipe, a file) and IWH_TABLE_WIDTH is not set."""
    forced = os.environ.get("IWH_TABLE_WIDTH", "")
    if forced.isdigit() and int(forced) > 0:
        return int(forced)
    try:
        return shutil.get_terminal_size().columns if sys.stdout.isatty() else None
    except (OSError, ValueError):
        return None


def table(df: pl.DataFrame, width: int | None = -1) -> str:
    """An aligned table; `width`: the characters a line may take (-1: terminal_width(); None: no limit)."""
    head, rows = _cells(df)
    if not head:
        return "(no columns)\n"
    width = terminal_width() if width == -1 else width
    prose = [bool(PROSE.search(h)) for h in head]
    numeric = [df.schema[c].is_numeric() or (df.schema[c] == pl.String and any(r[i] for r in rows)
                                             and all(not r[i] or _NUMBER_TEXT.match(r[i]) for r in rows))
               for i, c in enumerate(head)]
    cols = [[r[i] for r in rows] for i in range(len(head))]
    natural = [max([len(h)] + [min(len(v), PROSE_CHARS) if p else len(v) for v in col])
               for h, col, p in zip(head, cols, prose, strict=True)]
    # a header may break at its underscores, a value at its spaces: below the longest piece a column wraps mid-word
    heads = [max(len(part) for part in _HEAD_BREAK.split(h)) for h in head]
    words = [max((len(w) for v in col for w in v.split()), default=0) for col in cols]
    # a number never wraps: its column is as wide as its widest value (or its header's longest piece)
    fixed = [max([heads[i]] + [len(v) for v in cols[i]]) if numeric[i] else None for i in range(len(head))]
    widths = _fit(natural, heads, words, fixed, prose, width)

    def lines_of(cells: list[str], header: bool = False) -> list[str]:
        wrapped = [_wrap_head(c, w) if header else _wrap(c, w, prose=p)
                   for c, w, p in zip(cells, widths, prose, strict=True)]
        out = []
        for parts in zip_longest(*wrapped, fillvalue=""):
            out.append("  ".join(c.rjust(w) if num else c.ljust(w)
                                 for c, w, num in zip(parts, widths, numeric, strict=True)).rstrip())
        return out

    lines = lines_of(head, header=True) + ["  ".join("-" * w for w in widths)]
    for r in rows:
        lines += lines_of(r)
    if not rows:
        lines.append("(no rows)")
    return "\n".join(lines) + "\n"


_HEAD_BREAK = re.compile(r"(?<=_)")


def _fit(natural: list[int], heads: list[int], words: list[int], fixed: list[int | None], prose: list[bool],
         width: int | None) -> list[int]:
    """Column widths within `width`. A number column takes `fixed` (its values' width: its header
    wraps at its underscores). Text columns narrow in turns, each turn to one level over the columns
    it may narrow, until the table fits: prose to PROSE_WIDTH; then every text column to its longest
    word (it wraps at spaces); then prose further; then the rest below their longest word (a long
    name wraps mid-word, whole). What cannot fit overflows."""
    gaps = 2 * (len(natural) - 1)
    if width is None or sum(natural) + gaps <= width:
        return natural
    n = len(natural)
    least = [max(heads[i], MIN_WIDTH) for i in range(n)]
    word = [max(words[i], least[i]) for i in range(n)]
    turns = ([max(least[i], PROSE_WIDTH) if prose[i] else natural[i] for i in range(n)],
             [max(least[i], PROSE_WIDTH) if prose[i] else word[i] for i in range(n)],
             [least[i] if prose[i] else word[i] for i in range(n)],
             least)
    for floors in turns:
        def sized(level: int, floors=floors) -> list[int]:
            return [fixed[i] if fixed[i] is not None else max(min(floors[i], natural[i]), min(natural[i], level))  # type: ignore[misc]
                    for i in range(n)]

        lo, hi = 1, max(natural)
        while lo < hi:  # the widest level at which the table fits
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if sum(sized(mid)) + gaps <= width else (lo, mid - 1)
        if sum(sized(lo)) + gaps <= width:
            break
    return sized(lo)


def _wrap_head(text: str, width: int) -> list[str]:
    """A header in lines of `width`, broken after its underscores."""
    lines, line = [], ""
    for part in _HEAD_BREAK.split(text):
        if line and len(line) + len(part) > width:
            lines.append(line)
            line = ""
        line += part
    return lines + [line] if line else lines or [""]


def _wrap(text: str, width: int, prose: bool) -> list[str]:
    """A cell in lines of `width`: at spaces where it has them, else cut into pieces (a kernel name
    or a path, whole over several lines); prose past PROSE_LINES lines (or PROSE_CHARS) ends in `…`."""
    if prose and len(text) > PROSE_CHARS:
        text = text[:PROSE_CHARS - 1] + "…"
    if len(text) <= width:
        return [text]
    lines = textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False) or [""]
    if prose and len(lines) > PROSE_LINES:
        lines = lines[:PROSE_LINES]
        lines[-1] = lines[-1][:width - 1] + "…"
    return lines


def markdown(df: pl.DataFrame) -> str:
    head, rows = _cells(df)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"
