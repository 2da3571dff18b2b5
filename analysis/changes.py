"""What changed when: over an ordered series of runs of one workload, the runs where a structural
metric or the identity of the generated kernels changed from the run before, with the before and
after of each.

A series is the runs of one workload (views/12_workloads.sql: the model plus its workload labels, device
and rank), ordered by compiler version (as releases, then build, then start time), or by a
label such as `nightly` (its values sorted as text: dates sort as dates). Structural metrics are
those `compare` reports, compile failures, fallbacks to eager and restarts among them; a kernel's
identity is its signature plus the hash of its normalised source, so a kernel renamed by its counter
is the same kernel and one whose code changed is not. Beside a change of identities, the kernels of
the two runs are paired as `compare --kernels` pairs them (match_kernels: renamed fusions included).

Two more kinds of change point: a compile phase (every `dynamo_timed` span a release writes) whose
time moved by 30% and 50 ms or more from one point of the series to the next (compile/phase_changes:
the median of a point's runs; timings are noisy, so this says where to look, it never gates), and a
generated Triton kernel whose launch config (warps, stages, CTAs, maxnreg, shared memory) differs
from the run before (triton/config_changes, its kernels paired by signature and order).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from inductor_warehouse.analysis.kernel_match import ADDED, CHANGED, REMOVED, RENAMED, match_kernels
from inductor_warehouse.analysis.metrics import EVENTS
from inductor_warehouse.analysis.rows import run_query
from inductor_warehouse.analysis.selectors import Selector, select_runs, workload_labels

IDENTITY = "kernel_identity"
PHASE = "compile_phase"
TRITON = "triton_config"
METRICS = ("kernels", "extern_kernels", "pre_fusion_nodes", "post_fusion_nodes", "fusion_rate", *EVENTS)
CHOICES = METRICS + (IDENTITY, PHASE, TRITON)
PHASE_RATIO, PHASE_MIN_SECONDS = 0.3, 0.05  # compile/phase_changes' defaults


@dataclass
class Change:
    metric: str
    before: object
    after: object
    detail: str = ""  # kernel identity: which kernels came, went or changed; a phase's or kernel's name


@dataclass
class ChangePoint:
    series: str            # model [workload labels]
    position: int          # the after run's place in its series (1-based)
    before_run: str
    after_run: str
    before_at: str         # what orders the series: the version, or the label's value
    after_at: str
    changes: list[Change] = field(default_factory=list)


@dataclass
class SeriesReport:
    model: str
    ordered_by: str
    series: dict[str, list[dict]]  # series key -> its runs, in order
    points: list[ChangePoint]


def changes(con, model: str, series_label: str | None = None, metrics: tuple[str, ...] = CHOICES,
            pair_on: tuple[str, ...] | None = None, phase: str | None = None,
            phase_ratio: float = PHASE_RATIO) -> SeriesReport:
    """`phase`: only compile phases whose name contains it; `phase_ratio`: the relative move of a
    phase's time that makes a change point."""
    unknown = set(metrics) - set(CHOICES)
    if unknown:
        raise ValueError(f"no metric {', '.join(sorted(unknown))}; choose from {', '.join(CHOICES)}")
    keys = tuple(k for k in (pair_on if pair_on is not None else workload_labels(con)) if k != series_label)
    series = _series(con, model, series_label, keys)
    # kernel identities compared by one digest a run; read whole only beside a changed digest
    digests = _identity_digests(con, model) if IDENTITY in metrics else {}
    at = (lambda r: str(r["labels"].get(series_label))) if series_label else (lambda r: r["compiler_version"] or "?")
    pairs = [(key, i, rs[i - 1], rs[i]) for key, rs in sorted(series.items()) for i in range(1, len(rs))]
    others = _triton_changes(con, model, pairs) if TRITON in metrics else {}
    for (key, b_at, h_at), found in (_phase_changes(con, model, series_label, keys, phase, phase_ratio).items()
                                     if PHASE in metrics else ()):
        # a point's runs in a row: its change shows between the last run of one point and the first of the next
        step = next(((k, i, b, h) for k, i, b, h in pairs if k == key and at(b) == b_at and at(h) == h_at), None)
        if step is not None:
            others.setdefault((step[2]["run_id"], step[3]["run_id"]), []).extend(found)
    steps = []  # (series key, position, before run, after run, metric changes, kernels changed?)
    for key, i, b, h in pairs:
        found = [Change(m, b.get(m), h.get(m)) for m in metrics if m in METRICS and _differs(b.get(m), h.get(m))]
        found += others.get((b["run_id"], h["run_id"]), [])
        kernels_changed = IDENTITY in metrics and digests.get(b["run_id"]) != digests.get(h["run_id"])
        if found or kernels_changed:
            steps.append((key, i + 1, b, h, found, kernels_changed))
    points = []
    kernels: dict[str, list[dict]] = {}
    for key, position, b, h, found, kernels_changed in steps:
        if kernels_changed:
            before, after = _generated_kernels(con, b["run_id"], kernels), _generated_kernels(con, h["run_id"], kernels)
            found.append(Change(IDENTITY, len(before), len(after), identity_change(before, after)))
        points.append(ChangePoint(key, position, b["run_id"], h["run_id"], at(b), at(h), found))
    return SeriesReport(model, series_label or "compiler version", series, points)


def _series(con, model: str, series_label: str | None, keys: tuple[str, ...]) -> dict[str, list[dict]]:
    """Series key (the workload over `keys`) -> its runs in order; with a `series_label`, only the runs
    that have it."""
    # a run of benchmark-harness results alone compiled nothing: no point of a series
    runs = [r for r in select_runs(con, Selector(f"model={model}", {"model": model}, {}), pair_on=keys)
            if not r["harness_only"] and (not series_label or r["labels"].get(series_label) is not None)]
    series: dict[str, list[dict]] = {}
    for r in runs:
        series.setdefault(r["workload"], []).append(r)
    order = _by_label(series_label) if series_label else _by_version
    return {key: sorted(rs, key=order) for key, rs in series.items()}


def _generated_kernels(con, run_id: str, read: dict[str, list[dict]]) -> list[dict]:
    """A run's generated kernels (compare/kernels), read once however many change points it is in."""
    if run_id not in read:
        read[run_id] = [k for k in run_query(con, "compare/kernels", run=run_id) if k["generated"]]
    return read[run_id]


def _phase_changes(con, model: str, series_label: str | None, keys: tuple[str, ...], phase: str | None,
                   ratio: float) -> dict[tuple[str, str, str], list[Change]]:
    """(series key, before point, after point) -> the compile phases whose time moved between them
    (compile/phase_changes, over the same workload keys and order as the series)."""
    out: dict[tuple[str, str, str], list[Change]] = {}
    # every workload of the model (workloads=None), not the page the query gives by default
    for r in run_query(con, "compile/phase_changes", model=model, phase=phase, ratio=ratio,
                       min_seconds=PHASE_MIN_SECONDS, series=series_label, pair_on=",".join(keys), workloads=None):
        detail = (f"{r['phase']}: {r['ratio']:.2f}x, {r['direction']} (median of {r['before_runs']} and "
                  f"{r['after_runs']} runs)")
        out.setdefault((r["workload"], r["before_version"], r["after_version"]), []).append(
            Change(PHASE, r["before_seconds"], r["after_seconds"], detail))
    return out


def _triton_changes(con, model: str, pairs: list[tuple]) -> dict[tuple[str, str], list[Change]]:
    """(before run, after run) -> its Triton kernels whose launch config differs (triton/config_changes)."""
    if not pairs:
        return {}
    out: dict[tuple[str, str], list[Change]] = {}
    steps = ",".join(f"{b['run_id']}>{h['run_id']}" for _, _, b, h in pairs)
    for r in run_query(con, "triton/config_changes", model=model, steps=steps):
        out.setdefault((r["base_run"], r["head_run"]), []).append(
            Change(TRITON, launch_config(r, "base"), launch_config(r, "head"),
                   f"{r['head_kernel']}" + (f" (was {r['base_kernel']})" if r["base_kernel"] != r["head_kernel"] else "")
                   + ("; its code changed too" if r["source_changed"] else "")))
    return out


def launch_config(row: dict, side: str) -> str:
    """`warps=8 stages=1 shared=0`: what triton/config_changes compares of one side (known parts)."""
    parts = (("warps", "num_warps"), ("stages", "num_stages"), ("shared", "shared_bytes"), ("regs", "n_regs"))
    return " ".join(f"{word}={row[f'{side}_{col}']}" for word, col in parts if row.get(f"{side}_{col}") is not None)


def release_key(version: str | None) -> tuple:
    """Compiler versions in release order: 2.6.0 before 2.13.0, a build's local part after its release."""
    v = version or ""
    return (tuple(int(x) for x in re.findall(r"\d+", v.split("+")[0])[:3]), v)


def _by_version(r: dict) -> tuple:
    return (*release_key(r.get("compiler_version")), str(r.get("started_at") or ""), r["run_id"])


def _by_label(label: str):
    def key(r: dict) -> tuple:
        return (str(r["labels"].get(label)), str(r.get("started_at") or ""), r["run_id"])
    return key


def _differs(a, b) -> bool:
    if a is None or b is None:
        return (a is None) != (b is None)
    return abs(float(a) - float(b)) > 1e-9


def _identity_digests(con, model: str) -> dict[str, int]:
    """Run id -> the digest of its generated kernels' identities (runs without any are absent)."""
    return {r["run_id"]: r["digest"] for r in run_query(con, "changes/kernel_identity_digests", model=model)}


def identity_change(before: list[dict], after: list[dict]) -> str:
    """The generated kernels of two runs paired (compare's match_kernels), in words: how many changed
    their code, were renamed (and to what), came or went."""
    paired = match_kernels(before, after)
    parts = []
    for status, what in ((CHANGED, "code changed"), (RENAMED, "renamed"), (ADDED, "added"), (REMOVED, "removed")):
        hit = [k for k in paired if k.status == status]
        if not hit:
            continue
        if status == RENAMED:
            names = sorted(f"{k.base_kernel} -> {k.head_kernel}" for k in hit)
        else:
            names = sorted({k.signature for k in hit})
        parts.append(f"{len(hit)} {what}: {', '.join(names[:6])}{' ...' if len(names) > 6 else ''}")
    return "; ".join(parts)
