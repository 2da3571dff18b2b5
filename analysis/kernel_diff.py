"""`iwh compare --kernels`: one workload's runs on both sides, diffed down to kernels, fusion
groups, autotune winners and Triton launch configs."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

import re

from inductor_warehouse.analysis.kernel_code import KernelCode, KernelCodes, code_diff
from inductor_warehouse.analysis.kernel_match import (ADDED, CHANGED, META, REMOVED, RENAMED, SAME, STATUSES, KernelChange,
                                                       match_kernels)
from inductor_warehouse.analysis.pairing import paired_groups, workload_text
from inductor_warehouse.analysis.canned_rows import Reader, Row, run_query
from inductor_warehouse.analysis.selectors import SelectorError, parse_selector


@dataclass
class FusionChange:
    kind: str  # split (one base group became several) | merged (several base groups became one)
    graph: str
    base_groups: list[str]
    head_groups: list[str]


@dataclass
class AutotuneChange:
    """An op max-autotune tuned on either side (same op, shapes, strides, dtypes), and its winners."""
    status: str  # changed | same | added (head only) | removed (base only)
    op: str
    shapes: str | None
    dtypes: str | None
    base_winner: str | None
    base_config: str | None
    base_ms: float | None
    head_winner: str | None
    head_config: str | None
    head_ms: float | None


@dataclass
class TritonConfigChange:
    """A generated Triton kernel on both sides whose launch config differs (triton/config_changes:
    paired by signature and order): warps, stages, shared memory (bytes) and registers of each side,
    None where the artifacts do not say."""
    signature: str
    base_kernel: str
    head_kernel: str
    base_num_warps: int | None
    head_num_warps: int | None
    base_num_stages: int | None
    head_num_stages: int | None
    base_shared_bytes: int | None
    head_shared_bytes: int | None
    base_n_regs: int | None
    head_n_regs: int | None
    source_changed: bool


@dataclass
class KernelDiff:
    model: str
    base_run: str
    head_run: str
    kernels: list[KernelChange]
    fusions: list[FusionChange]
    notes: list[str] = field(default_factory=list)
    autotune: list[AutotuneChange] = field(default_factory=list)
    triton: list[TritonConfigChange] = field(default_factory=list)
    # each run's compare/kernels rows, by run id: what the line diff and the pages' viewer links read
    # again (left out of the JSON output: to_dict)
    kernel_rows: dict[str, list[Row]] = field(default_factory=dict, repr=False, compare=False)

    def counts(self, generated_only: bool = True) -> dict[str, int]:
        c = Counter(k.status for k in self.kernels if k.generated or not generated_only)
        return {s: c.get(s, 0) for s in STATUSES}

    @property
    def code_changes(self) -> list[int]:
        """Positions in `kernels` of the pairs whose code differs (changed, or renamed with new code),
        metadata aside."""
        return [i for i, k in enumerate(self.kernels) if k.code_changed and k.status in (CHANGED, RENAMED)]

    @property
    def meta_changes(self) -> list[int]:
        """Positions in `kernels` of the pairs whose sources differ in their metadata alone."""
        return [i for i, k in enumerate(self.kernels) if k.meta_only]


def kernel_diff(con: Reader, base: str, head: str, model: str, pair_on: tuple[str, ...] | None = None,
                workload: str | None = None) -> KernelDiff:
    """Kernels of `model` matched across the sides by name and normalised source hash, then by
    structure (`match_kernels`).

    Base and head selectors are as for `compare`; runs pair by workload as there. `workload` (a key
    as `compare` gives it, ModelPair.workload) picks the workload to diff; else the first of the
    model's (the notes list the others). When a side has several runs of it, the earliest (pass run
    ids to choose)."""
    groups_b, groups_h, common, dims, _ = paired_groups(con, parse_selector(base), parse_selector(head), model,
                                                         pair_on)
    if not common:
        apart = dims.get(model, [])
        hint = f"; narrow the selectors, e.g. add {apart[0]}=..." if apart else ""
        raise SelectorError(f"no workload of {model} is on both sides (its runs differ in "
                            f"{', '.join(apart) or 'nothing the workload labels say'}){hint}")
    if workload is not None and workload not in common:
        raise SelectorError(f"workload {workload!r} is not on both sides; those that are: {', '.join(common)}")
    key = workload or common[0]
    b, h = groups_b[key][0]["run_id"], groups_h[key][0]["run_id"]
    notes: list[str] = []
    if len(common) > 1 and workload is None:
        notes.append(f"{len(common)} workloads of {model} on both sides; diffing {workload_text(groups_b[key])}, "
                     f"also: {', '.join(workload_text(groups_b[k]) for k in common if k != key)} (narrow the selectors)")
    if len(groups_b[key]) > 1 or len(groups_h[key]) > 1:
        notes.append(f"{len(groups_b[key])} base and {len(groups_h[key])} head runs of {workload_text(groups_b[key])}: "
                     f"diffing {b} and {h} (give run ids to choose)")
    kb, kh = run_query(con, "compare/kernels", run=b), run_query(con, "compare/kernels", run=h)
    fusions, fusion_notes = _fusion_changes(run_query(con, "compare/fusions", run=b),
                                            run_query(con, "compare/fusions", run=h))
    autotune = _autotune_changes(run_query(con, "compare/autotune", run=b), run_query(con, "compare/autotune", run=h))
    triton = [TritonConfigChange(**{k: r[k] for k in TritonConfigChange.__dataclass_fields__})
              for r in run_query(con, "triton/config_changes", steps=f"{b}>{h}")]
    kernels = mark_meta_only(con, b, h, match_kernels(kb, kh))
    meta = {(k.base_kernel, k.head_kernel) for k in kernels if k.meta_only}
    for t in triton:  # a launch config that moved with metadata alone: the code is the same
        t.source_changed = t.source_changed and (t.base_kernel, t.head_kernel) not in meta
    return KernelDiff(model, b, h, kernels, fusions, notes + fusion_notes, autotune, triton, {b: kb, h: kh})


# a generated kernel's metadata: the keyword arguments of its Triton heuristics decorator that describe
# it to the runtime (kernel name, backend hash, autotuning switches), not what it computes
_META_ARG = re.compile(r"\b(?:triton_meta|inductor_meta)\s*=\s*\{")


def without_meta(source: str) -> str:
    """A kernel's source less its `triton_meta={...}` and `inductor_meta={...}` arguments (braces
    balanced), whitespace closed up: what the kernel computes."""
    out: list[str] = []
    i = 0
    for m in _META_ARG.finditer(source):
        if m.start() < i:
            continue
        depth, j = 0, m.end() - 1
        while j < len(source):
            depth += {"{": 1, "}": -1}.get(source[j], 0)
            j += 1
            if depth == 0:
                break
        out.append(source[i:m.start()])
        i = j
    out.append(source[i:])
    return re.sub(r"\s+", " ", re.sub(r",\s*(?=[,)])", "", "".join(out)))


def mark_meta_only(con: Reader, base_run: str, head_run: str, kernels: list[KernelChange],
                   codes: KernelCodes | None = None) -> list[KernelChange]:
    """Pairs whose code differs only in metadata (each side's own text, normalised as hashed, less
    its triton_meta / inductor_meta): `meta changed` (was changed), or renamed with meta_only set;
    their code diff is hidden unless asked for."""
    codes = codes or KernelCodes(con)
    for k in kernels:
        if k.source_changed and k.status in (CHANGED, RENAMED):
            a, b = pair_codes(codes, base_run, head_run, k)
            if a and b and a.text is not None and b.text is not None \
                    and without_meta(a.normalised()) == without_meta(b.normalised()):
                k.meta_only = True
                if k.status == CHANGED:
                    k.status = META
    return kernels


def pair_codes(codes: KernelCodes, base_run: str, head_run: str,
               change: KernelChange) -> tuple[KernelCode | None, KernelCode | None]:
    """Each side's code of a kernel pair (None for a side without the kernel): its own text where its
    run's output code is stored (KernelCodes.get)."""
    def side(run: str, graph: str | None, name: str | None, h: str | None) -> KernelCode | None:
        if name is None:
            return None
        return codes.get(run, graph, name, h, look_up=False)

    return (side(base_run, change.base_graph, change.base_kernel, change.base_hash),
            side(head_run, change.head_graph, change.head_kernel, change.head_hash))


def _autotune_changes(base: list[Row], head: list[Row]) -> list[AutotuneChange]:
    """Winners matched by what was tuned (op, shapes, strides, dtypes; the nth such op). A winner
    changed when another choice won, or the same template with another config; choices are compared
    without their per-graph counter (triton_mm_12 and triton_mm_3 are one template)."""
    def keyed(rows: list[Row]) -> dict[tuple[str, str | None, str | None, str | None, int], Row]:
        seen: Counter[tuple[str, str | None, str | None, str | None]] = Counter()
        out = {}
        for r in rows:
            k: tuple[str, str | None, str | None, str | None] = (r["op"], r["shapes"], r["strides"], r["dtypes"])
            seen[k] += 1
            out[k + (seen[k],)] = r
        return out

    kb, kh = keyed(base), keyed(head)
    out = []
    for k in sorted(set(kb) | set(kh), key=lambda k: tuple(str(x) for x in k)):
        b, h = kb.get(k), kh.get(k)
        if b is None or h is None:
            status = ADDED if b is None else REMOVED
        elif (b["choice_kind"], b["config"]) == (h["choice_kind"], h["config"]):
            status = SAME
        else:
            status = CHANGED
        out.append(AutotuneChange(status, k[0], k[1], k[3], *_winner(b), *_winner(h)))
    order = {CHANGED: 0, ADDED: 1, REMOVED: 2, SAME: 3}
    return sorted(out, key=lambda c: order[c.status])


def _winner(row: Row | None) -> tuple[str | None, str | None, float | None]:
    """An autotune row's winning choice, its config and time; Nones for a side that did not tune the op."""
    return (row["choice"], row["config"], row["time_ms"]) if row is not None else (None, None, None)


def _fusion_changes(base: list[Row], head: list[Row]) -> tuple[list[FusionChange], list[str]]:
    """Split and merged fusion groups per graph (graphs paired by compile id and phase).

    Member names (op0, op1, ...) number the pre-fusion nodes, so they name the same node on both
    sides only when the pre-fusion graphs have the same length; other graphs are noted, not diffed."""
    graphs_b, graphs_h = _by_graph(base), _by_graph(head)
    changes: list[FusionChange] = []
    notes: list[str] = []
    for g in sorted(set(graphs_b) & set(graphs_h), key=str):
        gb, gh = graphs_b[g], graphs_h[g]
        nb, nh = gb[0]["pre_fusion_nodes"], gh[0]["pre_fusion_nodes"]
        label = f"{g[0]} {g[1]}"
        if nb != nh:
            notes.append(f"graph {label}: pre-fusion graphs differ ({nb} vs {nh} nodes); fusion groups not diffed")
            continue
        owner_b = {m: r["group_name"] for r in gb for m in r["members"] or ()}
        owner_h = {m: r["group_name"] for r in gh for m in r["members"] or ()}
        for kind, groups, owner_other in (("merged", gh, owner_b), ("split", gb, owner_h)):
            for r in groups:
                others = sorted({owner_other[m] for m in r["members"] or () if m in owner_other})
                if len(others) > 1:
                    pair = (others, [r["group_name"]]) if kind == "merged" else ([r["group_name"]], others)
                    changes.append(FusionChange(kind, label, *pair))
    return changes, notes


def _by_graph(rows: list[Row]) -> dict[tuple[str, str | None], list[Row]]:
    out: defaultdict[tuple[str, str | None], list[Row]] = defaultdict(list)
    for r in rows:
        out[(r["compile_id"] or r["graph_id"], r["phase"])].append(r)
    return out


def change_label(change: KernelChange) -> str:
    """How a changed kernel is named to people: its phase and the kernel on each side."""
    return f"{change.phase or '-'}: {change.base_kernel} -> {change.head_kernel}"


def change_code_diff(codes: KernelCodes, base_run: str, head_run: str, change: KernelChange) -> str:
    """Unified diff of a kernel pair's own texts, normalised (kernel_code.code_diff)."""
    return code_diff(*pair_codes(codes, base_run, head_run, change))
