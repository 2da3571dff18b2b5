"""Printing result frames: an aligned table for people, CSV or JSON for scripts.

A table fits the terminal (COLUMNS, else the terminal's width; IWH_TABLE_WIDTH for any output; no
limit when the output is not a terminal, so a pipe gets one line a row): the widest text columns
narrow and their cells wrap onto more lines, at spaces first, then after the punctuation inside a long
name (`_ / . - = , :`), so a workload, a kernel name or a path is never cut, and a short word (a run id,
a version, a date) is never split; prose (a reason, a detail) past a few lines ends with `…`. A table
with more columns than the width can hold so prints one record a row (`name  value` lines).
Rates and shares print as percentages; CSV and JSON keep every value whole, as the warehouse has it."""

from __future__ import annotations

import os
import re
import shutil
import sys
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
    widths = _fit([_Measure(h, col, p, num) for h, col, p, num in zip(head, cols, prose, numeric, strict=True)],
                  width)
    if widths is None:  # too many columns for the width: one record a row, as psql's expanded display
        return records(head, rows, prose, width)  # type: ignore[arg-type]

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


_HEAD_BREAK = re.compile(r"(?<=_)(?=.)")
# where a word may break when it must: after the punctuation that joins the parts of a name, a path,
# a version or a label (`triton_poi_fused_`, `models/`, `fb_in1k.`, `device=`)
_WORD_BREAK = re.compile(r"(?<=[_/.\-=,:])(?=[^_/.\-=,:])")
# a word this short (a run id, a version, a date, most model names) is kept whole while anything longer
# can still break: it tells rows apart, and one split in two reads as two values
SHORT_WORD = 24


class _Measure:
    """The widths a column can take, from most to least comfortable."""

    def __init__(self, head: str, cells: list[str], prose: bool, numeric: bool):
        self.prose, self.numeric, self.cells = prose, numeric, cells[:SAMPLE_ROWS]
        words = [w for v in cells for w in v.split()]
        self.head = max(len(part) for part in _HEAD_BREAK.split(head))  # its header's longest piece
        values = max([len(v) for v in cells], default=0)
        if numeric:  # a number never wraps: its column is as wide as its widest value
            self.natural, self.fixed = max(len(head), values), max(self.head, values)
            return
        self.natural = max([len(head)] + [min(len(v), PROSE_CHARS) if prose else len(v) for v in cells])
        self.word = max([len(w) for w in words], default=0)
        self.piece = max([len(w) if len(w) <= SHORT_WORD else max(len(p) for p in _WORD_BREAK.split(w))
                          for w in words], default=0)
        self.short = max([len(w) for w in words if len(w) <= SHORT_WORD], default=0)
        self.split = max([len(p) for w in words for p in _WORD_BREAK.split(w) if len(w) <= SHORT_WORD], default=0)


def _fit(cols: list[_Measure], width: int | None) -> list[int] | None:
    """Column widths within `width`. Columns narrow in turns, each turn to one level over the columns it
    may narrow (the widest first), until the table fits: prose to PROSE_WIDTH; every text column to its
    longest word (it wraps at spaces); prose to its header; text to its longest piece (a long word breaks
    after `_ / . - = , :`, a short one stays whole); then long words mid-word, short ones still whole;
    then short words at their punctuation too (a run id has none). None when even that does not fit
    (the caller prints records instead)."""
    n = len(cols)
    gaps = 2 * (n - 1)
    natural = [c.natural for c in cols]
    if width is None or sum(natural) + gaps <= width:
        return natural
    header = [max(c.head, MIN_WIDTH) for c in cols]

    def text(pick) -> list[int]:
        return [c.fixed if c.numeric else max(pick(c, i), 1) for i, c in enumerate(cols)]

    turns = (text(lambda c, i: max(header[i], PROSE_WIDTH) if c.prose else c.natural),
             text(lambda c, i: max(header[i], PROSE_WIDTH) if c.prose else max(c.word, header[i])),
             text(lambda c, i: header[i] if c.prose else max(c.word, header[i])),
             text(lambda c, i: header[i] if c.prose else max(c.piece, header[i])),
             text(lambda c, i: header[i] if c.prose else max(c.short, header[i])),
             text(lambda c, i: header[i] if c.prose else max(c.split, header[i])))
    for floors in turns:
        def sized(level: int, floors=floors) -> list[int]:
            return [max(min(floors[i], natural[i]), min(natural[i], level)) for i in range(n)]

        lo, hi = 1, max(natural)
        while lo < hi:  # the widest level at which the table fits
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if sum(sized(mid)) + gaps <= width else (lo, mid - 1)
        if sum(sized(lo)) + gaps <= width:
            return _spread(cols, sized(1), width - gaps)
    return None


SAMPLE_ROWS = 100  # the rows whose wrapped height decides where spare width goes


def _spread(cols: list[_Measure], widths: list[int], room: int) -> list[int]:
    """From their narrowest, widen the columns where a character saves the most wrapped lines (over
    the first SAMPLE_ROWS rows), so a column that is wide in one row does not take what another needs
    in every row; what is left goes to the widest, as the levels do."""
    widths = list(widths)
    n, spare = len(cols), room - sum(widths)
    rows = min(len(c.cells) for c in cols) if cols else 0
    cache: dict[tuple[int, int], list[int]] = {}

    def lines(i: int, w: int) -> list[int]:
        if (i, w) not in cache:
            # prose counted whole (to PROSE_CHARS): a wider column shows more of it before its `…`
            cache[i, w] = [len(_wrap(v[:PROSE_CHARS], w, False)) for v in cols[i].cells[:rows]]
        return cache[i, w]

    while spare > 0:
        current = [lines(i, widths[i]) for i in range(n)]
        # each row's tallest and second tallest cell: the tallest of the others is one of them
        tops = [sorted(((current[j][r], j) for j in range(n)), reverse=True)[:2] for r in range(rows)]
        best, gain = None, 0.0
        for i, c in enumerate(cols):
            if c.numeric or widths[i] >= c.natural:
                continue
            others = [(t[1][0] if len(t) > 1 else 1) if t[0][1] == i else t[0][0] for t in tops]
            now = sum(max(o, x) for o, x in zip(others, current[i], strict=True))
            steps = {widths[i] + k for k in (1, 2, 4, 8)} | {len(v) for v in c.cells[:rows]}
            for w in sorted(x for x in steps if widths[i] < x <= min(c.natural, widths[i] + spare)):
                saved = now - sum(max(o, x) for o, x in zip(others, lines(i, w), strict=True))
                if saved / (w - widths[i]) > gain:
                    best, gain = (i, w), saved / (w - widths[i])
        if best is None:
            break
        spare -= best[1] - widths[best[0]]
        widths[best[0]] = best[1]
    while spare > 0:  # nothing saves a line: the widest text shows more of itself on each
        grow = [i for i, c in enumerate(cols) if not c.numeric and widths[i] < c.natural]
        if not grow:
            break
        i = max(grow, key=lambda i: cols[i].natural - widths[i])
        widths[i] += 1
        spare -= 1
    return widths


def records(head: list[str], rows: list[list[str]], prose: list[bool], width: int) -> str:
    """One block a row, a line a column (`name  value`, the value wrapped as a table's cell): a table
    whose columns cannot all fit `width` without splitting a run id or a version."""
    key = min(max(len(h) for h in head), max(MIN_WIDTH, width // 3))
    room = max(width - key - 2, MIN_WIDTH)
    out = []
    for k, row in enumerate(rows, 1):
        out.append(f"-[ {k} of {len(rows)} ]".ljust(min(width, key + 2 + room), "-"))
        for h, cell, p in zip(head, row, prose, strict=True):
            names, values = _wrap_head(h, key), _wrap(cell, room, prose=p)
            out += [f"{a.ljust(key)}  {b}".rstrip() for a, b in zip_longest(names, values, fillvalue="")]
    return "\n".join(out or ["(no rows)"]) + "\n"


def paragraph(text: str, width: int | None = -1, indent: str = "") -> str:
    """A line of prose (a heading, a headline, a warning) wrapped at its spaces to `width` (-1:
    terminal_width(); None: one line), later lines indented by `indent`."""
    width = terminal_width() if width == -1 else width
    if width is None or len(text) <= width:
        return text
    return "\n".join(_fill([(" ", w) for w in text.split()], width, indent))


def _pieces(text: str, width: int, breaks: re.Pattern) -> list[str]:
    """`text` in pieces at `breaks`, each of at most `width` (a piece too long is cut, the last resort)."""
    out: list[str] = []
    for piece in breaks.split(text):
        while len(piece) > width:
            out, piece = out + [piece[:width]], piece[width:]
        if piece:
            out.append(piece)
    return out


def _fill(pieces: list[tuple[str, str]], width: int, indent: str = "") -> list[str]:
    """Lines of at most `width` from (separator, piece) pairs, greedily; lines after the first begin
    with `indent`."""
    lines, line = [], ""
    for sep, piece in pieces:
        if not line:
            line = piece
        elif len(line) + len(sep) + len(piece) <= width:
            line += sep + piece
        else:
            lines.append(line)
            line = indent + piece
    return lines + [line] if line else lines or [""]


def _wrap_head(text: str, width: int) -> list[str]:
    """A header in lines of `width`, broken after its underscores (mid-word only when it must)."""
    return _fill([("", p) for p in _pieces(text, max(width, 1), _HEAD_BREAK)], width)


def _wrap(text: str, width: int, prose: bool) -> list[str]:
    """A cell in lines of `width`: at spaces; a word longer than a line breaks after its punctuation
    (`_ / . - = , :`), and only a piece longer than a line is cut (a kernel name or a path stays whole
    over several lines); a word that fits a line is never broken; prose past PROSE_LINES lines (or
    PROSE_CHARS) ends in `…`."""
    if prose and len(text) > PROSE_CHARS:
        text = text[:PROSE_CHARS - 1] + "…"
    if len(text) <= width:
        return [text]
    width = max(width, 1)
    pieces: list[tuple[str, str]] = []
    for word in text.split():
        if len(word) <= width:
            pieces.append((" ", word))
            continue
        for j, piece in enumerate(_pieces(word, width, _WORD_BREAK)):
            pieces.append((" " if j == 0 else "", piece))
    lines = _fill(pieces, width)
    if prose and len(lines) > PROSE_LINES:
        lines = lines[:PROSE_LINES]
        lines[-1] = lines[-1][:width - 1] + "…"
    return lines


def markdown(df: pl.DataFrame) -> str:
    head, rows = _cells(df)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"
