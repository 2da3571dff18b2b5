"""One model line across two releases: the kernels it became on each side, paired as the kernel
diff pairs them (`kernel_diff` -> `match_kernels`: unchanged, renamed, changed, added, removed),
with split and merged told from the line's lineage.

A kernel belongs to the line on a side when that side's lineage says so (lineage/line_across_runs).
A run without provenance (2.6's C++ kernels have none) has no line of its own: its kernels are those
the kernel diff pairs with the other side's kernels of the line, marked so (`on_line`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

import polars as pl

from inductor_warehouse.analysis.kernel_code import KernelCodes
from inductor_warehouse.analysis.kernel_diff import KernelDiff, change_code_diff, kernel_diff
from inductor_warehouse.analysis.kernel_match import ADDED, REMOVED, KernelChange
from inductor_warehouse.analysis.canned_rows import Reader, run_query

SPLIT, MERGED = "split", "merged"
# a run's kernels, (phase, kernel name) -> the source nodes their lineage names
KernelNodes: TypeAlias = dict[tuple[str | None, str | None], set[str]]


@dataclass
class LineKernel:
    change: KernelChange
    status: str  # the kernel diff's status, or split / merged for an added / removed kernel that shares nodes
    on_line: str  # both | base | head: whose lineage names this kernel for the line
    base_us: float | None = None
    head_us: float | None = None


@dataclass
class LineDiff:
    file: str
    line: int
    model: str
    base_run: str
    head_run: str
    kernels: list[LineKernel]
    code: str | None  # the line's code, where an FX node of either run carries it
    notes: list[str] = field(default_factory=list)
    diff: KernelDiff | None = None


def parse_location(text: str) -> tuple[str, int]:
    """`FILE:LINE` (FILE: any part of the path) -> (file, line)."""
    file, sep, line = text.rpartition(":")
    if not sep or not file or not line.isdigit():
        raise ValueError(f"{text!r} is not FILE:LINE (e.g. gen_models.py:28)")
    return file, int(line)


def line_diff(con: Reader, base: str, head: str, model: str, file: str, line: int, pair_on: tuple[str, ...] | None = None,
              diff: KernelDiff | None = None) -> LineDiff:
    """The kernels of `file:line` in the base and head runs of `model` (selectors as `compare`'s);
    `diff`: the kernel diff of those sides, when the caller has it already."""
    diff = diff or kernel_diff(con, base, head, model, pair_on=pair_on)
    b, h = diff.base_run, diff.head_run
    rows = run_query(con, "lineage/line_across_runs", file=file, line=line, runs=f"{b},{h}")
    mine = {run: {(r["phase"], r["kernel_name"]): r for r in rows if r["run_id"] == run} for run in (b, h)}
    # a run whose lineage names a kernel of this line has lineage: asked of the warehouse only otherwise
    with_lineage = {run: bool(mine[run]) or _has_lineage(con, run) for run in (b, h)}
    nodes = {run: {(r["phase"], r["kernel_name"]): set(r["lineage_nodes"] or ()) for r in
                   (diff.kernel_rows[run] if run in diff.kernel_rows
                                                else run_query(con, "compare/kernels", run=run))}
             for run in (b, h)}
    out: list[LineKernel] = []
    externs: dict[str, set[str]] = {"base": set(), "head": set()}
    for c in diff.kernels:
        in_b = (c.phase, c.base_kernel) in mine[b]
        in_h = (c.phase, c.head_kernel) in mine[h]
        if not (in_b or in_h):
            continue
        if not c.generated:  # extern call sites of one op share its name: they are counted, not paired
            externs["base"].update([c.base_kernel] if in_b and c.base_kernel is not None else [])
            externs["head"].update([c.head_kernel] if in_h and c.head_kernel is not None else [])
            continue
        on = "both" if in_b and in_h else "base" if in_b else "head"
        out.append(LineKernel(c, c.status, on,
                              (mine[b].get((c.phase, c.base_kernel)) or {}).get("kernel_us"),
                              (mine[h].get((c.phase, c.head_kernel)) or {}).get("kernel_us")))
    _split_merged(out, nodes[b], nodes[h])
    notes = list(diff.notes)
    for run, side in ((b, "base"), (h, "head")):
        if not with_lineage[run]:
            other = "head" if side == "base" else "base"
            notes.append(f"the {side} run {run} has no provenance (INDUCTOR_PROVENANCE=1 and TORCH_TRACE record it): "
                         f"its kernels here are those the kernel diff pairs with the {other}'s kernels of the line")
    for side, ops in externs.items():
        if ops:
            notes.append(f"{side}: the line also calls {', '.join(sorted(ops))} (extern kernels)")
    if not out:
        notes.append(f"no kernel of either run came from {file}:{line}")
    code = next((r.get("source_code") for r in run_query(con, "lineage/source_line_kernels", run=h, file=file, line=line)
                 if r.get("source_code")), None)
    return LineDiff(file, line, model, b, h, out, code, notes, diff)


def _has_lineage(con: Reader, run: str) -> bool:
    return bool(run_query(con, "lineage/source_line_kernels", run=run))


def _split_merged(kernels: list[LineKernel], base_nodes: KernelNodes, head_nodes: KernelNodes) -> None:
    """An added head kernel of the line that shares source nodes with a paired head kernel of the
    line is part of a split (one base kernel became several); a removed base kernel sharing nodes
    with a paired base kernel, of a merge."""
    paired = [k for k in kernels if k.change.base_kernel and k.change.head_kernel]
    for k in kernels:
        c = k.change
        if c.status == ADDED:
            mine = head_nodes.get((c.phase, c.head_kernel)) or set()
            if any(mine & (head_nodes.get((p.change.phase, p.change.head_kernel)) or set()) for p in paired):
                k.status = SPLIT
        elif c.status == REMOVED:
            mine = base_nodes.get((c.phase, c.base_kernel)) or set()
            if any(mine & (base_nodes.get((p.change.phase, p.change.base_kernel)) or set()) for p in paired):
                k.status = MERGED


def line_code_diffs(con: Reader, result: LineDiff) -> list[tuple[str, str]]:
    """(label, unified diff of the pair's own texts, normalised) of each pair of the line whose code differs."""
    codes = KernelCodes(con)
    return [(f"{k.change.phase or '-'}: {k.change.base_kernel} -> {k.change.head_kernel}",
             change_code_diff(codes, result.base_run, result.head_run, k.change))
            for k in result.kernels if k.change.code_changed]


def line_frame(result: LineDiff) -> pl.DataFrame:
    """One row per kernel of the line: status, phase, the kernel on each side, whose lineage names
    it, whether its code changed, what paired it, and each side's profiled time."""
    rows = [{"status": k.status, "phase": k.change.phase, "category": k.change.category,
             "base_kernel": k.change.base_kernel, "head_kernel": k.change.head_kernel, "on_line": k.on_line,
             "code_changed": k.change.code_changed, "paired_by": k.change.how or None,
             "base_us": k.base_us, "head_us": k.head_us} for k in result.kernels]
    return pl.DataFrame(rows, schema={"status": pl.String, "phase": pl.String, "category": pl.String,
                                      "base_kernel": pl.String, "head_kernel": pl.String, "on_line": pl.String,
                                      "code_changed": pl.Boolean, "paired_by": pl.String, "base_us": pl.Float64,
                                      "head_us": pl.Float64})
