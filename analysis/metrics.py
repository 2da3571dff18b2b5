"""The metrics of a workload on both sides, each judged by its rule (analysis/regress.py), the
failures that are new, and the summary over workloads."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from inductor_warehouse.analysis import regress
from inductor_warehouse.analysis.canned_rows import Reader, Row, run_query
from inductor_warehouse.analysis.words import model_key


# compile events as views/20_run_metrics.sql defines them, of every frame wherever its code lives:
# graph breaks as Dynamo counts them, the breaks it files as unimplemented, recompiles, failures,
# fallbacks to eager and restarts
EVENTS = ("failures", "fallbacks", "restarts", "graph_breaks", "uncounted_breaks", "recompiles")
STRUCTURAL = ("kernels", "extern_kernels", "pre_fusion_nodes", "post_fusion_nodes", "fusion_rate",
              *EVENTS, "fx_cache_hit_rate")
TIMINGS = ("compile_s", "kernel_us")
# the benchmark harness's numbers of a run (schema/queries/compare/harness.sql), where a harness row measured it
HARNESS = ("accuracy", "speedup", "compilation_latency", "compression_ratio")
METRICS = STRUCTURAL + TIMINGS + HARNESS
RATES = ("fusion_rate", "fx_cache_hit_rate")  # a sum of rates means nothing: the summary shows their geomean only
# A hit rate of several runs is the rate of their summed counts (schema/views/05_rates.sql's hit_rate of
# a group, as the canned queries pool it), never a median of the runs' rates: a cold run and a warm one
# hit half the lookups. metric -> (numerator, denominator, the macro's rate of the two)
POOLED: dict[str, tuple[str, str, Callable[[float, float], float | None]]] = {
    "fx_cache_hit_rate": ("fx_hits", "fx_lookups", lambda hits, lookups: hits / lookups if lookups > 0 else None),
}
# A rate whose counts a side shows beside it is the rate of those counts, each the runs' lower median
# (views/06_point_values.sql: fusion_rate(count_of_runs(pre), count_of_runs(post))): the rate a reader
# works out from the table. metric -> (numerator, denominator, the macro's rate of the two)
OF_COUNTS: dict[str, tuple[str, str, Callable[[float, float], float | None]]] = {
    "fusion_rate": ("post_fusion_nodes", "pre_fusion_nodes", lambda post, pre: 1.0 - post / pre if pre > 0 else None),
}
UNSUMMED = RATES + HARNESS  # nor of speedups, latencies of different models, or pass/fail texts
# compile times, whose samples are a side's runs of one cache kind (of_one_kind)
COMPILE_TIMES = ("compile_s", "compilation_latency")
# what a run's compile time measures (views/06_point_values.sql's compile_kind), the most compiled first:
# caches off or cold, some graphs loaded, every graph loaded from the caches
CACHE_KINDS = ("compiled", "partial", "warm")


@dataclass
class MetricDelta:
    metric: str
    base: float | str | None  # a text for the harness's accuracy (pass, fail_accuracy, ...)
    head: float | str | None
    verdict: str
    how: str = ""

    @property
    def numbers(self) -> tuple[float, float] | None:
        """(base, head) where both are numbers: None for a missing side or texts."""
        if not isinstance(self.base, (int, float)) or not isinstance(self.head, (int, float)):
            return None
        return self.base, self.head

    @property
    def delta(self) -> float | None:
        n = self.numbers
        return None if n is None else n[1] - n[0]

    @property
    def pct(self) -> float | None:
        n = self.numbers
        return None if n is None or not n[0] else 100.0 * (n[1] - n[0]) / abs(n[0])


@dataclass
class Failure:
    """A failed compile of one run: its cause (registry id or normalised reason), the reason in
    one line, whether the frame then ran eagerly, and where."""
    run_id: str
    compile_id: str | None
    cause: str
    reason: str
    fallback: bool | None  # None: the log does not say whether errors were suppressed (before 2.6)
    frame: str | None  # file:line


@dataclass
class ModelPair:
    model: str
    config: dict[str, str]  # the workload labels beyond the model that tell this pair from the others shown
    base_runs: list[str]
    head_runs: list[str]
    metrics: dict[str, MetricDelta]
    workload: str = ""  # the full workload key the runs paired on
    new_failures: list[Failure] = field(default_factory=list)  # head failures of a cause the base lacks
    fixed_failures: list[Failure] = field(default_factory=list)  # base failures of a cause the head lacks
    unfinished: list[str] = field(default_factory=list)  # each side's runs that did not finish, in words

    @property
    def key(self) -> str:
        return model_key(self.model, self.config)

    @property
    def regressions(self) -> list[str]:
        return [m for m, d in self.metrics.items() if d.verdict == regress.REGRESSION]


@dataclass
class SummaryRow:
    metric: str
    models: int
    base_total: float | None
    head_total: float | None
    geomean_ratio: float | None  # geomean of head/base over models where both are > 0
    regressions: int
    improvements: int
    geomean_workloads: int = 0  # the workloads the geomean is over
    # workloads the geomean leaves out that moved: 0 on one side only has no ratio (0 on both is no move)
    geomean_left_out: int = 0
    # workloads the geomean leaves out whose verdict is not comparable (a warm side against a compiled one)
    geomean_not_comparable: int = 0


def failures_of(con: Reader, runs: list[Row]) -> dict[str, list[Failure]]:
    """Run id -> its failures, for the runs that have any (compare/failures)."""
    out: dict[str, list[Failure]] = defaultdict(list)
    if not runs:
        return out
    for r in run_query(con, "compare/failures", runs=",".join(sorted({r["run_id"] for r in runs}))):
        frame = (r["user_file"].rsplit("/", 1)[-1] + (f":{r['user_line']}" if r["user_line"] is not None else "")
                 if r["user_file"] else None)
        out[r["run_id"]].append(Failure(r["run_id"], r["compile_id"], r["cause"], r["reason"],
                                        r["fallback"], frame))
    return out


def pooled(runs: list[Row], metric: str) -> float | None:
    """A rate of POOLED over the runs: the rate of their summed counts, each sum of the runs that know
    it (SQL's sum(): the queries' fusion_rate(sum(pre), sum(post)))."""
    num, den, rate = POOLED[metric]
    nums, dens = [r[num] for r in runs if r.get(num) is not None], [r[den] for r in runs if r.get(den) is not None]
    return rate(sum(nums), sum(dens)) if nums and dens else None


def side_samples(runs: list[Row], metric: str) -> regress.Samples:
    """A side's samples of a metric: a value a run, or, for the harness's numbers, a value a harness
    row that measured the run (a list on the run); a pooled rate's one value over the runs; a rate of
    OF_COUNTS the one value of the side's counts."""
    if metric in POOLED:
        rate = pooled(runs, metric)
        return [] if rate is None else [rate]
    if metric in OF_COUNTS:
        num, den, of = OF_COUNTS[metric]
        counts = [regress.side_value(regress.DEFAULT_RULES[c], side_samples(runs, c)) for c in (num, den)]
        rate = of(*counts) if all(isinstance(c, (int, float)) for c in counts) else None  # type: ignore[arg-type]
        return [] if rate is None else [rate]
    out: list[float | str] = []  # a metric column's values: numbers, or the harness's accuracy texts
    for r in runs:
        v = r.get(metric)
        if v is not None:
            out.extend(v if isinstance(v, list) else [v])
    return [str(v) for v in out] if metric == "accuracy" else [float(v) for v in out]


def _shown_value(rule: regress.Rule, values: regress.Samples) -> float | str | None:
    """The value a side shows, by its metric's one rule (regress.side_value)."""
    return regress.side_value(rule, values)


def compile_kind(temperature: str | None) -> str:
    """How a run met the caches, for its compile time (views/06_point_values.sql's compile_kind)."""
    return temperature if temperature in ("partial", "warm") else "compiled"


def of_one_kind(runs: list[Row], metric: str) -> tuple[str | None, list[Row], list[str]]:
    """A side's (or a point's) runs whose compile times are its samples: those of its most compiled
    cache kind, as compile_time_of_point takes them in SQL: the kind (None where no run has a time),
    those runs, and the kinds of the timed runs left out. A warm run loads what a cold one compiles."""
    timed = [r for r in runs if r.get(metric) is not None]
    kinds = [compile_kind(r.get("cache_temperature")) for r in timed]
    kind = next((k for k in CACHE_KINDS if k in kinds), None)
    return (kind, [r for r, k in zip(timed, kinds, strict=True) if k == kind],
            [k for k in kinds if k != kind])


def _left_out(side: str, kinds: list[str]) -> str:
    return f"{side}: {len(kinds)} {'/'.join(sorted(set(kinds)))} run{'s' if len(kinds) > 1 else ''} left out" if kinds else ""


def judge_pair(workload: str, base: list[Row], head: list[Row], rules: dict[str, regress.Rule],
               failures: dict[str, list[Failure]]) -> ModelPair:
    metrics = {}
    # a run killed mid-compile made part of what the compiler makes: no sample of it
    whole = [[r for r in side if not unfinished(r)] for side in (base, head)]
    for m in METRICS:
        kinds: tuple[str | None, str | None] = (None, None)
        left: tuple[list[str], list[str]] = ([], [])
        sides = whole
        if m in COMPILE_TIMES:  # a side's compile times are those of its runs of one cache kind
            (kb, rb, lb), (kh, rh, lh) = of_one_kind(whole[0], m), of_one_kind(whole[1], m)
            kinds, sides, left = (kb, kh), [rb, rh], (lb, lh)
        vb, vh = side_samples(sides[0], m), side_samples(sides[1], m)
        verdict, how = regress.judge(rules[m], vb, vh)
        if verdict == regress.MISSING and bool(vb) != bool(vh) and m not in HARNESS:
            # a NULL is unknown: no sample, neither a regression nor an improvement, whatever the gate
            how = f"{'head' if vb else 'base'} unknown"
        if vb and vh and kinds[0] != kinds[1]:
            # a warm cache loads what a cold one compiles: a difference of caches, not of compilers
            verdict, how = regress.NOT_COMPARABLE, f"caches {kinds[0]} vs {kinds[1]}"
        elif vb and vh and (notes := [n for n in (_left_out("base", left[0]), _left_out("head", left[1])) if n]):
            how = "; ".join([how, *notes]) if how else "; ".join(notes)
        metrics[m] = MetricDelta(m, _shown_value(rules[m], vb), _shown_value(rules[m], vh), verdict, how)
    # a failure of a cause the base never had is new, whatever the counts say
    found = [[f for r in side for f in failures.get(r["run_id"], ())] for side in (base, head)]
    causes = [{f.cause for f in side} for side in found]
    new = [f for f in found[1] if f.cause not in causes[0]]
    fixed = [f for f in found[0] if f.cause not in causes[1]]
    judged = metrics["failures"]
    if new and rules["failures"].threshold is not None and judged.verdict != regress.REGRESSION:
        judged.verdict, judged.how = regress.REGRESSION, f"new: {new[0].cause}"
    failed = [did_not_finish(side) for side in (base, head)]
    if rules["failures"].threshold is not None and failed[0] != failed[1]:
        # the side did not finish: HUD fails a model that timed out, whatever its counts
        judged.verdict, judged.how = ((regress.REGRESSION, f"head {unfinished_text(head)}") if failed[1]
                                      else (regress.IMPROVEMENT, f"base {unfinished_text(base)}"))
    notes = [f"{side} {text}: left out of every metric" + (", the side failed (failures)" if fails else "")
             for side, runs, fails in (("base", base, failed[0]), ("head", head, failed[1]))
             if (text := unfinished_text(runs))]
    return ModelPair(base[0]["model"], dict(base[0]["config"]), [r["run_id"] for r in base],
                     [r["run_id"] for r in head], metrics, workload, new, fixed, notes)


def did_not_finish(runs: list[Row]) -> bool:
    """Whether a side (or a point) did not finish: a run that did not finish is a failures sample of the
    worst value, so the lower median of a count makes the side fail where more than half its runs did not
    finish; a retry that was killed beside a finished run is noise, not a failure."""
    return 2 * sum(1 for r in runs if unfinished(r)) > len(runs)


def unfinished_text(runs: list[Row]) -> str | None:
    """`1 of 2 runs did not finish (timed out (exit 124))`, or None where every run finished."""
    whys = [why for r in runs if (why := unfinished(r))]
    if not whys:
        return None
    return f"{len(whys)} of {len(runs)} run{'s' if len(runs) > 1 else ''} did not finish ({', '.join(sorted(set(whys)))})"


def unfinished(run: Row) -> str | None:
    """Why a run's process did not finish (compare/runs' `unfinished`: views/13_run_unfinished.sql's
    one rule, from what a capture records of it), or None. A process that raised ended on its own: its
    counts (its failures) are a sample like any other; so are a harness holder's rows."""
    why = run.get("unfinished")
    return str(why) if why else None


def summary(pairs: list[ModelPair]) -> list[SummaryRow]:
    rows = []
    for m in METRICS:
        deltas = [p.metrics[m] for p in pairs if p.metrics[m].base is not None and p.metrics[m].head is not None]
        # every side of a metric outside UNSUMMED is a number (only the harness's accuracy is a text)
        numbers = [n for d in deltas if (n := d.numbers) is not None]
        # a ratio of a cache load to a compile says nothing of the compiler: no part of the geomean
        comparable = [n for d in deltas if (n := d.numbers) is not None and d.verdict != regress.NOT_COMPARABLE]
        ratios = [h / b for b, h in comparable if b > 0 and h > 0]
        rows.append(SummaryRow(
            metric=m, models=len(deltas),
            base_total=sum(b for b, _ in numbers) if deltas and m not in UNSUMMED else None,
            head_total=sum(h for _, h in numbers) if deltas and m not in UNSUMMED else None,
            geomean_ratio=math.exp(sum(math.log(x) for x in ratios) / len(ratios)) if ratios else None,
            regressions=sum(d.verdict == regress.REGRESSION for d in deltas),
            improvements=sum(d.verdict == regress.IMPROVEMENT for d in deltas),
            geomean_workloads=len(ratios),
            geomean_left_out=sum(1 for b, h in comparable if b != h and not (b > 0 and h > 0)),
            geomean_not_comparable=len(numbers) - len(comparable),
        ))
    return rows
