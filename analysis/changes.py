"""What changed when: over an ordered series of runs of one workload, the runs where a structural
metric or the identity of the generated kernels changed from the run before, with the before and
after of each.

A series is the runs of one workload (views/12_workloads.sql: the model plus its workload labels, device
and rank), ordered by compiler version (as releases, then build, then start time), or by a
label such as `nightly` (its values sorted as text: dates sort as dates). Its points are the versions
(or the label's values): the runs of one are samples of that point, each metric's value the one
`iwh compare` takes of a side's runs, so a point never changes from itself. Structural metrics are
those `compare` reports, compile failures, fallbacks to eager and restarts among them; a kernel's
identity is its signature plus the hash of its normalised source, so a kernel renamed by its counter
is the same kernel and one whose code changed is not. Beside a change of identities, the kernels of
the two runs are paired as `compare --kernels` pairs them (match_kernels: renamed fusions included).

Two more kinds of change point: a compile phase (every `dynamo_timed` span a release writes) whose
time moved by 30% and half a second or more from one point of the series to the next
(compile/phase_changes: the median of a point's runs of one cache kind), judged only with more than
one run on each side (timings are noisy: with one run a side the point says "one run each: not judged",
once, and never gates) and between points whose runs met the caches alike (a warm point against a
compiled one says "not comparable, caches compiled vs warm", once, as `iwh compare` says it), a phase
that moved with its parent span folded under it; and a generated Triton kernel whose launch config
(warps, stages, CTAs, maxnreg, shared memory) differs from the run before (triton/config_changes, its
kernels paired by signature and order).

`ranked` orders every change of a report by its effect: a frame failing or falling back first, then
graph breaks and recompiles, the kernels, fusion, Triton launch configs and judged phase times, each
by how far it moved; phases not judged last.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeAlias

from inductor_warehouse.analysis.kernel_diff import mark_meta_only
from inductor_warehouse.analysis.kernel_match import ADDED, CHANGED, META, REMOVED, RENAMED, KernelChange, match_kernels
from inductor_warehouse.analysis import regress
from inductor_warehouse.analysis.metrics import EVENTS, did_not_finish, side_samples, unfinished, unfinished_text
from inductor_warehouse.analysis.canned_rows import Reader, Row, run_query
from inductor_warehouse.analysis.selectors import Selector, pair_on_param, select_runs, workload_labels
from inductor_warehouse.analysis.words import plural
from inductor_warehouse.schema.releases import release_key

IDENTITY = "kernel_identity"
PHASE = "compile_phase"
TRITON = "triton_config"
HARNESS = "harness"  # the benchmark harness's numbers, by HUD's per-model flags (harness/model_changes)
METRICS = ("kernels", "extern_kernels", "pre_fusion_nodes", "post_fusion_nodes", "fusion_rate", *EVENTS)
CHOICES = METRICS + (IDENTITY, PHASE, TRITON, HARNESS)
GITHUB_COMPARE = "https://github.com/pytorch/pytorch/compare"
PHASE_RATIO, PHASE_MIN_SECONDS = 0.3, 0.5  # a phase's move that counts: relative, and absolute (s)
TOP = 10  # rows `iwh changes` shows before `--all`
NOT_JUDGED = "one run each: not judged"
# what a change weighs, most first (ranked): a frame failing or running eagerly, graph breaks and
# recompiles and HUD's per-model flags, the count of generated kernels, which kernels they are, fusion,
# launch configs, compile phase times
TIERS = {"failures": 0, "fallbacks": 0, "graph_breaks": 1, "uncounted_breaks": 1, "recompiles": 1, "restarts": 1,
         "harness": 1, "kernels": 2, "extern_kernels": 2, "kernel_identity": 3, "fusion_rate": 4,
         "post_fusion_nodes": 4, "pre_fusion_nodes": 4, "triton_config": 5, "compile_phase": 6}
# a step of a series: (series key, the after run's index, the run before, the run after)
Step: TypeAlias = tuple[str, int, Row, Row]


@dataclass
class Change:
    metric: str
    before: float | str | None  # a number, or a text (a launch config, the harness's accuracy)
    after: float | str | None
    detail: str = ""  # kernel identity: which kernels came, went or changed; a phase's or kernel's name
    size: float | None = None  # how far it moved, 0..1 (relative), where the values do not say it
    judged: bool = True  # False: timings of one run a side, shown so, ranked last

    def effect(self) -> tuple[int, float]:
        """Sort key, biggest effect first: (tier, -relative size)."""
        size = self.size
        if size is None and isinstance(self.before, (int, float)) and isinstance(self.after, (int, float)):
            size = abs(self.after - self.before) / (max(abs(self.before), abs(self.after)) or 1)
        return (TIERS.get(self.metric, len(TIERS)) + (0 if self.judged else len(TIERS)), -(size or 0.0))


@dataclass
class ChangePoint:
    series: str            # model [workload labels]
    position: int          # the after run's place in its series (1-based)
    before_run: str
    after_run: str
    before_at: str         # what orders the series: the version, or the label's value
    after_at: str
    changes: list[Change] = field(default_factory=list)
    before_commit: str | None = None  # the torch builds' git hashes (runs.compiler_commit), where known
    after_commit: str | None = None

    @property
    def commits(self) -> str | None:
        """`2236df17...cf30153c`: the range of torch commits between the two builds, where both are known
        and differ."""
        b, a = self.before_commit, self.after_commit
        return f"{b[:12]}...{a[:12]}" if b and a and b != a else None

    @property
    def compare_url(self) -> str | None:
        """GitHub's view of the commits between the two builds."""
        b, a = self.before_commit, self.after_commit
        return f"{GITHUB_COMPARE}/{b}...{a}" if b and a and b != a else None


@dataclass
class SeriesReport:
    model: str
    ordered_by: str
    series: dict[str, list[Row]]  # series key -> its runs, in order
    points: list[ChangePoint]
    # the model's harness series (--metric harness): series key -> its points, changed or not
    harness: dict[str, int] = field(default_factory=dict)
    # series key -> how many points its runs make (a version's runs, a label value's, are one point)
    point_counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # the points whose runs did not all finish, and why

    def ranked(self) -> list[tuple[ChangePoint, Change]]:
        """Every change of every point, biggest effect first (Change.effect), then in series order."""
        rows = [(p, c) for p in self.points for c in p.changes]
        return sorted(rows, key=lambda pc: (pc[1].effect(), pc[0].series, pc[0].position, pc[1].metric, pc[1].detail))


def changes(con: Reader, model: str, series_label: str | None = None, metrics: tuple[str, ...] = CHOICES,
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
    at: Callable[[Row], str] = ((lambda r: str(r["labels"].get(series_label))) if series_label
                                 else (lambda r: r["compiler_version"] or "?"))
    placed = {key: _points(rs, at) for key, rs in series.items()}
    # a step: from one point to the next, each point shown by its first run (as `compare --kernels` diffs a side's)
    pairs = [(key, i, ps[i - 1][0], ps[i][0]) for key, ps in sorted(placed.items()) for i in range(1, len(ps))]
    others = _triton_changes(con, model, pairs) if TRITON in metrics else {}
    for (key, b_at, h_at), found in (_phase_changes(con, model, series_label, keys, phase, phase_ratio).items()
                                     if PHASE in metrics else ()):
        step = next(((k, i, b, h) for k, i, b, h in pairs if k == key and at(b) == b_at and at(h) == h_at), None)
        if step is not None:
            others.setdefault((step[2]["run_id"], step[3]["run_id"]), []).extend(found)
    # (series key, position, before point, after point, metric changes, kernels changed?)
    steps: list[tuple[str, int, list[Row], list[Row], list[Change], bool]] = []
    known = _last_known(placed, metrics)
    for key, i, b, h in pairs:
        after_point = placed[key][i]
        found = [Change(m, before, after) for m in metrics if m in METRICS
                 if (after := point_value(after_point, m)) is not None
                 and (before := known[key][i - 1].get(m)) is not None and _differs(before, after)]
        if "failures" in metrics and did_not_finish(placed[key][i - 1]) != did_not_finish(after_point):
            # a point that did not finish failed, as compare fails such a side (metrics.did_not_finish)
            stopped = after_point if did_not_finish(after_point) else placed[key][i - 1]
            found = [c for c in found if c.metric != "failures"]
            found.append(Change("failures", point_value(placed[key][i - 1], "failures"), point_value(after_point, "failures"),
                                f"{'after' if stopped is after_point else 'before'}: {unfinished_text(stopped)}", size=1.0))
        found += others.get((b["run_id"], h["run_id"]), [])
        kernels_changed = IDENTITY in metrics and digests.get(b["run_id"]) != digests.get(h["run_id"])
        if found or kernels_changed:
            steps.append((key, i + 1, placed[key][i - 1], after_point, found, kernels_changed))
    points = []
    kernels: dict[str, list[Row]] = {}
    for key, position, before_point, after_point, found, kernels_changed in steps:
        b, h = before_point[0], after_point[0]
        if kernels_changed:
            base, head = _generated_kernels(con, b["run_id"], kernels), _generated_kernels(con, h["run_id"], kernels)
            paired = mark_meta_only(con, b["run_id"], h["run_id"], match_kernels(base, head))
            moved = sum(k.status in (CHANGED, ADDED, REMOVED) for k in paired)
            found.append(Change(IDENTITY, len(base), len(head), identity_change(base, head, paired),
                                size=moved / (max(len(base), len(head)) or 1)))
        points.append(ChangePoint(key, position, b["run_id"], h["run_id"], at(b), at(h), found,
                                  _commit(before_point), _commit(after_point)))
    harness: dict[str, int] = {}
    if HARNESS in metrics:
        points += _harness_changes(con, model, series_label)
        harness = _harness_series(con, model, series_label)
    notes = [f"{key} at {at(p[0])}: {text}: left out" + (", the point failed (failures)" if did_not_finish(p) else "")
             for key, ps in sorted(placed.items()) for p in ps if (text := unfinished_text(p))]
    return SeriesReport(model, series_label or "compiler version", series, points, harness,
                        {key: len(ps) for key, ps in placed.items()}, notes)


def _points(runs: list[Row], at: Callable[[Row], str]) -> list[list[Row]]:
    """A series' runs (in order) as its points: the runs of one version, or of one value of the label,
    are samples of one point, as `iwh compare` takes a side's runs, never points of their own."""
    out: list[list[Row]] = []
    for r in runs:
        if out and at(out[-1][0]) == at(r):
            out[-1].append(r)
        else:
            out.append([r])
    return out


def point_value(runs: list[Row], metric: str) -> float | None:
    """A point's value of a structural metric by the metric's one rule, as `iwh compare` takes a side's
    (metrics.side_samples: the fusion rate of the lower median node counts, the hit rate of the
    summed counts, else the lower median), over the runs that
    finished (metrics.unfinished: a run killed mid-compile is no sample); None where no run knows it."""
    finished = [r for r in runs if not unfinished(r)]
    samples = side_samples(finished, metric)
    value = regress.side_value(regress.DEFAULT_RULES[metric], samples)
    return value if isinstance(value, (int, float)) else None


def _commit(runs: list[Row]) -> str | None:
    """The torch build's git hash of a point, where its runs know one and agree on it."""
    found = {r.get("compiler_commit") for r in runs}
    return found.pop() if len(found) == 1 else None


def _harness_changes(con: Reader, model: str, series_label: str | None) -> list[ChangePoint]:
    """The steps of the model's harness workloads (a series a suite, backend and workload, its points
    releases or the label's values) where one of HUD's per-model flags fires (harness/model_changes:
    each point's samples by the metric's one rule, as HUD's numbers and `iwh compare` take them)."""
    steps: dict[tuple[str, int], ChangePoint] = {}
    for r in run_query(con, "harness/model_changes", model=model, key=series_label):
        key = (_harness_key(r), r["position"])
        point = steps.setdefault(key, ChangePoint(key[0], r["position"], r["before_run"], r["after_run"],
                                                  r["before_point"], r["point"]))
        # HUD flags the harness's measurements; its graph-break count is Dynamo's, judged exactly
        who = "" if r["metric"] == "graph_breaks" else "HUD "
        point.changes.append(Change(HARNESS, r["before"], r["after"], f"{r['metric']}: {who}{r['flag']}"))
    return list(steps.values())


def _harness_key(r: Row) -> str:
    return f"{r['workload']} [suite={r['suite']} backend={r['backend']}]"


def _harness_series(con: Reader, model: str, series_label: str | None) -> dict[str, int]:
    """The model's harness series (harness/models: a workload's record at each point) -> how many points
    each has: a series whose steps flag nothing is a series without a change, not a missing model."""
    points: dict[str, set[str]] = {}
    for r in run_query(con, "harness/models", model=model, key=series_label):
        points.setdefault(_harness_key(r), set()).add(str(r["point"]))
    return {key: len(found) for key, found in points.items()}


def _series(con: Reader, model: str, series_label: str | None, keys: tuple[str, ...]) -> dict[str, list[Row]]:
    """Series key (the workload over `keys`) -> its runs in order; with a `series_label`, only the runs
    that have it."""
    # a run of benchmark-harness results alone compiled nothing: no point of a series
    runs = [r for r in select_runs(con, Selector(f"model={model}", {"model": model}, {}), pair_on=keys)
            if not r["harness_only"] and (not series_label or r["labels"].get(series_label) is not None)]
    series: dict[str, list[Row]] = {}
    for r in runs:
        series.setdefault(r["workload"], []).append(r)
    order = _by_label(series_label) if series_label else _by_version
    return {key: sorted(rs, key=order) for key, rs in series.items()}


def _generated_kernels(con: Reader, run_id: str, read: dict[str, list[Row]]) -> list[Row]:
    """A run's generated kernels (compare/kernels), read once however many change points it is in."""
    if run_id not in read:
        read[run_id] = [k for k in run_query(con, "compare/kernels", run=run_id) if k["generated"]]
    return read[run_id]


def _phase_changes(con: Reader, model: str, series_label: str | None, keys: tuple[str, ...], phase: str | None,
                   ratio: float) -> dict[tuple[str, str, str], list[Change]]:
    """(series key, before point, after point) -> the compile phases whose time moved between them
    (compile/phase_changes, over the same workload keys and order as the series): with more than one
    run a side, each top phase, those that moved with it folded under it; else one "not judged" line."""
    moved: dict[tuple[str, str, str], list[Row]] = {}
    # every workload of the model (workloads=None), not the page the query gives by default
    for r in run_query(con, "compile/phase_changes", model=model, phase=phase, ratio=ratio,
                       min_seconds=PHASE_MIN_SECONDS, series=series_label, pair_on=pair_on_param(con, keys), workloads=None):
        moved.setdefault((r["workload"], r["before_version"], r["after_version"]), []).append(r)
    out: dict[tuple[str, str, str], list[Change]] = {}
    for point, rows in moved.items():
        tops = _fold(rows)
        judged: list[tuple[Row, list[str]]] = []
        rest: list[tuple[Row, list[str]]] = []
        apart: list[tuple[Row, list[str]]] = []
        for r, under in tops:
            # a warm point's phases load what a cold one's compile: never a change of the compiler (as compare)
            if r["before_cache"] != r["after_cache"]:
                apart.append((r, under))
            elif r["before_runs"] > 1 and r["after_runs"] > 1:
                judged.append((r, under))
            else:
                rest.append((r, under))
        changes = [Change(PHASE, r["before_seconds"], r["after_seconds"], _phase_detail(r, under)) for r, under in judged]
        if rest:
            changes.append(_one_line(rest, NOT_JUDGED))
        if apart:
            r = apart[0][0]
            changes.append(_one_line(apart, f"{regress.NOT_COMPARABLE}, caches {r['before_cache']} vs {r['after_cache']}"))
        out[point] = changes
    return out


def _one_line(tops: list[tuple[Row, list[str]]], why: str) -> Change:
    """The phases of a step that are not judged, as one unjudged line: the one that moved most, and how
    many others moved too."""
    r, under = max(tops, key=lambda ru: abs(ru[0]["after_seconds"] - ru[0]["before_seconds"]))
    others = len(tops) - 1
    return Change(PHASE, r["before_seconds"], r["after_seconds"],
                  f"{why}: {_phase_detail(r, under, False)}" + (f"; {plural(others, 'other phase')} moved too" if others else ""),
                  judged=False)


def _fold(rows: list[Row]) -> list[tuple[Row, list[str]]]:
    """The phases whose parent (or an ancestor) did not move the same way, each with the names of the
    phases nested in it that did: a parent's move already says theirs."""
    by_name = {r["phase"]: r for r in rows}

    def top(r: Row) -> Row:
        seen = {r["phase"]}
        while (p := by_name.get(r.get("parent"))) is not None and p["direction"] == r["direction"] and p["phase"] not in seen:
            seen.add(p["phase"])
            r = p
        return r

    nested: dict[str, list[str]] = {}
    for r in rows:
        nested.setdefault(top(r)["phase"], [])
        if top(r) is not r:
            nested[top(r)["phase"]].append(r["phase"])
    return [(by_name[name], sorted(under)) for name, under in nested.items()]


def _phase_detail(r: Row, under: list[str], judged: bool = True) -> str:
    # a line not judged carries no verdict word: "faster" would judge what it says it does not
    moved = "" if r["direction"] == regress.NOT_COMPARABLE or not judged else f", {r['direction']}"
    text = f"{r['phase']}: {r['ratio']:.2f}x{moved} (median of {r['before_runs']} and {r['after_runs']} runs)"
    if under:
        text += f"; with it {plural(len(under), 'nested phase')}: {', '.join(under[:4])}{' ...' if len(under) > 4 else ''}"
    return text


def _triton_changes(con: Reader, model: str, pairs: list[Step]) -> dict[tuple[str, str], list[Change]]:
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


def launch_config(row: Row, side: str) -> str:
    """`warps=8 stages=1 shared=0`: what triton/config_changes compares of one side (known parts)."""
    parts = (("warps", "num_warps"), ("stages", "num_stages"), ("shared", "shared_bytes"), ("regs", "n_regs"))
    return " ".join(f"{word}={row[f'{side}_{col}']}" for word, col in parts if row.get(f"{side}_{col}") is not None)


def _by_version(r: Row) -> tuple[tuple[int, ...], str, str, str]:
    return (*release_key(r.get("compiler_version")), str(r.get("started_at") or ""), r["run_id"])


def _by_label(label: str) -> Callable[[Row], tuple[str, str, str]]:
    def key(r: Row) -> tuple[str, str, str]:
        return (str(r["labels"].get(label)), str(r.get("started_at") or ""), r["run_id"])
    return key


def _last_known(placed: dict[str, list[list[Row]]], metrics: tuple[str, ...]) -> dict[str, list[dict[str, float]]]:
    """Per series and point, each metric's value at the last point up to there that has one: a point
    whose value is no sample makes no change point, and the point after it is judged against the last
    point that had one (never against a 0 it does not have)."""
    out: dict[str, list[dict[str, float]]] = {}
    for key, ps in placed.items():
        last: dict[str, float] = {}
        out[key] = []
        for p in ps:
            last = {**last, **{m: v for m in metrics if m in METRICS and (v := point_value(p, m)) is not None}}
            out[key].append(last)
    return out


def _differs(a: float, b: float) -> bool:
    return abs(float(a) - float(b)) > 1e-9


def _identity_digests(con: Reader, model: str) -> dict[str, int]:
    """Run id -> the digest of its generated kernels' identities (runs without any are absent)."""
    return {r["run_id"]: r["digest"] for r in run_query(con, "changes/kernel_identity_digests", model=model)}


def identity_change(before: list[Row], after: list[Row], paired: list[KernelChange] | None = None) -> str:
    """The generated kernels of two runs paired (compare's match_kernels), in words: how many changed
    their code, were renamed (and to what), came or went."""
    paired = match_kernels(before, after) if paired is None else paired
    parts = []
    for status, what in ((CHANGED, "code changed"), (META, "metadata changed"), (RENAMED, "renamed"), (ADDED, "added"),
                         (REMOVED, "removed")):
        hit = [k for k in paired if k.status == status]
        if not hit:
            continue
        if status == RENAMED:
            names = sorted(f"{k.base_kernel} -> {k.head_kernel}" for k in hit)
        else:
            names = sorted({k.signature for k in hit})
        parts.append(f"{len(hit)} {what}: {', '.join(names[:6])}{' ...' if len(names) > 6 else ''}")
    return "; ".join(parts)
