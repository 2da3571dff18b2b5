"""Kernels of two runs paired: by name and normalised source hash, then by structure, so that a
kernel renamed by a release still pairs with itself."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from inductor_warehouse.analysis.canned_rows import Row

# unchanged: same name, same code; changed: same name, other code; meta changed: same name, code
# differing only in its metadata (a Triton kernel's triton_meta / inductor_meta: kernel_diff tells);
# renamed: the same kernel under another name (same code, or the same fusion by structure: its code
# may differ too); added, removed
ADDED, REMOVED, CHANGED, RENAMED, SAME = "added", "removed", "changed", "renamed", "unchanged"
META = "meta changed"
STATUSES = (CHANGED, META, RENAMED, ADDED, REMOVED, SAME)


@dataclass
class KernelChange:
    status: str
    signature: str
    generated: bool
    category: str | None
    phase: str | None
    base_kernel: str | None
    head_kernel: str | None
    base_hash: str | None
    head_hash: str | None
    how: str = ""  # what paired it: name, source hash, or structure (lineage, source nodes, ATen ops, op words)
    meta_only: bool = False  # its sources differ in metadata lines alone (kernel_diff.mark_meta_only)
    base_graph: str | None = None  # the graph of each side's kernel (kernel names repeat across graphs)
    head_graph: str | None = None

    @property
    def source_changed(self) -> bool:
        return self.base_hash is not None and self.head_hash is not None and self.base_hash != self.head_hash

    @property
    def code_changed(self) -> bool:
        """The code differs beyond its metadata."""
        return self.source_changed and not self.meta_only


# Ops that only move or re-view data: later releases add them to fused kernels' names
# (cpp_fused_gelu_2 in 2.6 is cpp_fused_gelu_view_2 in 2.13), so they do not tell fusions apart.
_LAYOUT_WORDS = frozenset({"view", "unsafe", "expand", "transpose", "permute", "clone", "unsqueeze", "squeeze",
                           "reshape", "as", "strided", "t", "alias", "contiguous", "select", "slice"})
_FUSED_PREFIX = re.compile(r"^.*?fused_?")
STRUCTURE_MIN = 0.5  # least Jaccard similarity of two kernels' structure for them to pair


def _op_words(signature: str) -> frozenset[str]:
    """The ops a fused kernel's name lists, as words, less layout ops: `cpp_fused_add_native_layer_norm_view`
    -> {add, native, layer, norm}."""
    if "fused" not in signature:
        return frozenset()
    return frozenset(w for w in _FUSED_PREFIX.sub("", signature).split("_") if w and w not in _LAYOUT_WORDS)


def _structure(a: Row, b: Row) -> tuple[float, str]:
    """How alike two kernels are (Jaccard similarity, by what): the best agreement of any description
    both have: the source nodes their lineage links them to, the source nodes or ATen ops their code
    names, the scheduler nodes their fusion groups hold (in graphs of as many nodes: node names number
    a graph's nodes), the op words of their fused names. Releases describe kernels differently (2.6's
    C++ kernels have neither lineage nor op words in `cpp_fused_0`), so no one description decides."""
    best = (0.0, "")
    described: list[tuple[Iterable[str], Iterable[str], str]] = [(a.get(c) or (), b.get(c) or (), what) for c, what in (
        ("lineage_nodes", "lineage"), ("source_nodes", "source nodes"), ("aten_ops", "ATen ops"),
        ("scheduler_nodes", "scheduler nodes"))]
    described.append((_op_words(a["signature"] or ""), _op_words(b["signature"] or ""), "op words"))
    for xs, ys, what in described:
        x, y = set(xs), set(ys)
        if what == "scheduler nodes" and not {n.partition(":")[0] for n in x} & {n.partition(":")[0] for n in y}:
            continue
        if x and y and len(x & y) / len(x | y) > best[0]:
            best = (len(x & y) / len(x | y), what)
    return best


def _counter(name: str | None) -> int:
    m = re.search(r"_(\d+)$", name or "")
    return int(m.group(1)) if m else 0


def match_kernels(base: list[Row], head: list[Row]) -> list[KernelChange]:
    """Kernels of two runs paired, most certain first: the same name and code (unchanged); the same
    code under another name (renamed); the same name (changed code); then, among the generated
    kernels of a phase still unpaired, the most alike by structure (`_structure`, at least
    STRUCTURE_MIN: renamed, its code compared too). What stays unpaired is added or removed.
    Names compare without their per-graph counter (signature)."""
    left, right = list(base), list(head)
    out: list[KernelChange] = []

    def sig(k: Row) -> str:
        name: str = k["signature"] or k["kernel_name"]
        return name

    def pair(test: Callable[[Row, Row], bool], how: str) -> None:
        for kb in list(left):
            for kh in right:
                if test(kb, kh):
                    status = SAME if sig(kb) == sig(kh) and kb["source_hash"] == kh["source_hash"] else \
                        CHANGED if sig(kb) == sig(kh) else RENAMED
                    out.append(_change(status, kb, kh, how))
                    left.remove(kb)
                    right.remove(kh)
                    break

    # the same phase first, then any: a kernel can move between graphs of a run
    for same_phase in (True, False):
        def phase_ok(kb: Row, kh: Row, same_phase: bool = same_phase) -> bool:
            return not same_phase or kb["phase"] == kh["phase"]
        pair(lambda kb, kh: phase_ok(kb, kh) and sig(kb) == sig(kh) and kb["source_hash"] == kh["source_hash"], "name")
        pair(lambda kb, kh: phase_ok(kb, kh) and kb["source_hash"] is not None
             and kb["source_hash"] == kh["source_hash"] and kb["generated"] == kh["generated"], "source hash")
        pair(lambda kb, kh: phase_ok(kb, kh) and sig(kb) == sig(kh), "name")
    for kb, kh, how in _alike(left, right):
        if any(kb is k for k in left) and any(kh is k for k in right):
            out.append(_change(RENAMED, kb, kh, how))
            left.remove(kb)
            right.remove(kh)
    out += [_change(REMOVED, kb, None, "") for kb in left]
    out += [_change(ADDED, None, kh, "") for kh in right]
    order = {s: i for i, s in enumerate(STATUSES)}
    return sorted(out, key=lambda c: (order[c.status], not c.generated, c.phase or "", c.signature,
                                      c.base_kernel or "", c.head_kernel or ""))


def _alike(left: list[Row], right: list[Row]) -> list[tuple[Row, Row, str]]:
    """(base kernel, head kernel, how) of the generated kernels of a phase alike by structure (at
    least STRUCTURE_MIN), most alike first, then of one category, then of the nearest counters."""
    candidates = []
    for kb in left:
        for kh in right:
            if kb["generated"] and kh["generated"] and kb["phase"] == kh["phase"]:
                score, what = _structure(kb, kh)
                if score >= STRUCTURE_MIN:
                    candidates.append((-score, kb["category"] != kh["category"],
                                       abs(_counter(kb["kernel_name"]) - _counter(kh["kernel_name"])),
                                       id(kb), id(kh), kb, kh, f"structure: {what} {score:.2f}"))
    return [(kb, kh, how) for *_, kb, kh, how in sorted(candidates, key=lambda c: c[:3])]


def _change(status: str, kb: Row | None, kh: Row | None, how: str) -> KernelChange:
    ref = kh or kb
    assert ref is not None, "a change has a kernel on one side at least"
    return KernelChange(
        status=status, signature=ref["signature"] or ref["kernel_name"], generated=bool(ref["generated"]),
        category=ref["category"], phase=ref["phase"], base_kernel=kb["kernel_name"] if kb else None,
        head_kernel=kh["kernel_name"] if kh else None,
        base_hash=kb["source_hash"] if kb else None, head_hash=kh["source_hash"] if kh else None, how=how,
        base_graph=kb.get("graph_id") if kb else None, head_graph=kh.get("graph_id") if kh else None,
    )
