"""Regression rules for `iwh compare`: when a change between two sides is a regression.

Structural metrics (kernel counts, fusion, compile failures, fallbacks to eager, graph breaks,
recompiles) are deterministic: the same model under the same compiler gives the same number, so any
move past the threshold counts. A failure of a cause the base side never had is a regression even
when the count holds (analysis/metrics.py).
Timings are noisy: one sample per side can never be a regression ("insufficient data"); with two
or three a side the minimums are compared (min-of-N, as LNT does: noise only adds time), or the
medians of a ratio of two measurements (a speedup: noise moves it either way); with four or more the
Mann-Whitney U test must also find the two sides different.

The benchmark harness's numbers (PyTorch's `benchmarks/dynamo`, as HUD gates them): its accuracy check
is deterministic, so an accuracy that passed (pass, pass_due_to_skip, eager_variation) and now fails is
a regression at once; speedup, compilation latency and compression ratio are measurements (the last a
ratio of peak memory, an RSS reading on CPU) and follow the timing rule, with HUD's thresholds: a
speedup or compression ratio below 0.95x the base, a compilation latency above 1.15x. A speedup of 0 is
the harness saying the model failed to run: that is no measurement but a failure, a regression as
exact as a failed accuracy check.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TypeAlias, cast

REGRESSION, IMPROVEMENT, UNCHANGED = "regression", "improvement", "unchanged"
WITHIN, INSUFFICIENT, NOT_GATED, MISSING = "within threshold", "insufficient data", "reported", "n/a"
NOT_COMPARABLE = "not comparable"  # e.g. compile times of a cold cache against a warm one

MIN_SAMPLES_FOR_TEST = 4
SIGNIFICANCE = 0.05
# HUD's passing accuracies (torchci's compilerUtils.ts): anything else failed
PASSING_ACCURACY = frozenset({"pass", "pass_due_to_skip", "eager_variation"})
# a side's samples of a metric: texts for a status rule (the harness's accuracy), numbers for any other
Samples: TypeAlias = "list[float] | list[str]"


@dataclass(frozen=True)
class Rule:
    metric: str
    higher_is_worse: bool
    threshold: float | None  # None: reported, never gated
    relative: bool = False  # threshold is a fraction of the base value, not an absolute delta
    timing: bool = False  # measured: noisy, judged on samples
    status: bool = False  # a pass/fail text (the harness's accuracy): passing -> failing is a regression
    zero_fails: bool = False  # a value of 0 says the measurement failed (the harness's speedup)
    ratio: bool = False  # a ratio of two measurements (speedup): a side is its median, not its minimum


# More kernels or extern calls, a lower fusion rate, more compile failures or frames falling back to
# eager, more graph breaks (Dynamo's count, and the breaks it files as unimplemented) or recompiles,
# wherever their code lives, are regressions as soon as they move; restarts are reported (gate them
# with --threshold restarts=0); timings need a 10% move (LNT, asv and HUD use 5-15%).
DEFAULT_RULES: dict[str, Rule] = {r.metric: r for r in (
    Rule("kernels", True, 0),
    Rule("extern_kernels", True, 0),
    Rule("pre_fusion_nodes", True, None),
    Rule("post_fusion_nodes", True, None),
    Rule("fusion_rate", False, 0.0),
    Rule("failures", True, 0),
    Rule("fallbacks", True, 0),
    Rule("restarts", True, None),
    Rule("graph_breaks", True, 0),
    Rule("uncounted_breaks", True, 0),
    Rule("recompiles", True, 0),
    Rule("fx_cache_hit_rate", False, None),
    Rule("compile_s", True, 0.10, relative=True, timing=True),
    Rule("kernel_us", True, 0.10, relative=True, timing=True),
    Rule("accuracy", False, 0, status=True),
    Rule("speedup", False, 0.05, relative=True, timing=True, zero_fails=True, ratio=True),
    Rule("compilation_latency", True, 0.15, relative=True, timing=True),
    Rule("compression_ratio", False, 0.05, relative=True, timing=True, ratio=True),
    # suite numbers (HUD's summary of a side's harness rows; see analysis/hud.py's hud_summary)
    Rule("pass_rate", False, 0.10, relative=True),
)}


def parse_thresholds(specs: tuple[str, ...] | list[str]) -> dict[str, Rule]:
    """`metric=N` (absolute delta), `metric=N%` (relative), `metric=off` (report only)."""
    rules = dict(DEFAULT_RULES)
    for spec in specs:
        name, sep, value = spec.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or name not in rules:
            raise ValueError(f"--threshold {spec!r}: use METRIC=N, METRIC=N% or METRIC=off; "
                             f"metrics: {', '.join(rules)}")
        base = rules[name]
        if value.lower() == "off":
            rules[name] = dataclasses.replace(base, threshold=None)
            continue
        try:
            if value.endswith("%"):
                rules[name] = dataclasses.replace(base, threshold=float(value[:-1]) / 100, relative=True)
            else:
                rules[name] = dataclasses.replace(base, threshold=float(value), relative=False)
        except ValueError:
            raise ValueError(f"--threshold {spec!r}: {value!r} is not a number") from None
    return rules


def judge(rule: Rule, base: Samples, head: Samples) -> tuple[str, str]:
    """(verdict, how): verdict is regression / improvement / unchanged / within threshold /
    insufficient data / reported / n/a; `how` says which test decided."""
    if not base or not head:
        return MISSING, ""
    if rule.status:
        return _judge_status(rule, cast("list[str]", base), cast("list[str]", head))
    return _judge_numbers(rule, cast("list[float]", base), cast("list[float]", head))


def _judge_numbers(rule: Rule, base: list[float], head: list[float]) -> tuple[str, str]:
    if rule.zero_fails and (0 in base) != (0 in head):
        if rule.threshold is None:
            return NOT_GATED, "exact"
        return (REGRESSION, "head failed to run (0)") if 0 in head else (IMPROVEMENT, "base failed to run (0)")
    if rule.timing:
        return _judge_timing(rule, base, head)
    b, h = representative(base), representative(head)
    if b == h:
        return UNCHANGED, "exact"
    if rule.threshold is None:
        return NOT_GATED, "exact"
    return direction(rule, b, h), "exact"


def _judge_status(rule: Rule, base: list[str], head: list[str]) -> tuple[str, str]:
    """A side passes when every run of it passed; a side that passed against one with a failing run
    is a regression (or an improvement the other way); two failing sides are reported when their
    failures differ."""
    b, h = status(base), status(head)
    if b == h:
        return UNCHANGED, "exact"
    b_ok, h_ok = b in PASSING_ACCURACY, h in PASSING_ACCURACY
    if rule.threshold is None or b_ok == h_ok:
        return NOT_GATED, "exact"
    return (IMPROVEMENT if h_ok else REGRESSION), "exact"


def side_value(rule: Rule, values: Samples) -> float | str | None:
    """The one value a side's samples of a metric make, by the metric's rule, wherever it is shown
    (`iwh compare`, the HUD numbers of views/61_harness.sql's harness_models, `iwh changes`, the
    pages): a status is the worst of N (status); a measured time the min of N; a measured ratio the
    median of N (the lower median, an observed value), 0 when any sample is 0 where 0 says the
    measurement failed (the harness's speedup); anything else the lower median."""
    if not values:
        return None
    if rule.status:
        return status(cast("list[str]", values))
    numbers = cast("list[float]", values)
    if rule.zero_fails and 0 in numbers:
        return 0.0
    return best(rule, numbers) if rule.timing else representative(numbers)


def status(values: list[str]) -> str:
    """The status shown for a side: its first failing one (by name), else its first passing one."""
    failing = sorted(v for v in values if v not in PASSING_ACCURACY)
    return failing[0] if failing else sorted(values)[0]


def best(rule: Rule, values: list[float]) -> float:
    """What a measured side is: the least of its times, the (lower) median of its ratios."""
    return representative(values) if rule.ratio else min(values)


def _judge_timing(rule: Rule, base: list[float], head: list[float]) -> tuple[str, str]:
    if min(len(base), len(head)) < 2:
        return INSUFFICIENT, f"n={len(base)}/{len(head)}"
    b, h = best(rule, base), best(rule, head)
    of_n = "median-of-N" if rule.ratio else "min-of-N"
    if rule.threshold is None:
        return NOT_GATED, of_n
    verdict = direction(rule, b, h)
    if min(len(base), len(head)) < MIN_SAMPLES_FOR_TEST or verdict == WITHIN:
        return verdict, f"{of_n}, n={len(base)}/{len(head)}"
    p = mann_whitney_p(base, head)
    how = f"Mann-Whitney p={p:.3g}, n={len(base)}/{len(head)}"
    return (verdict if p < SIGNIFICANCE else WITHIN), how


def direction(rule: Rule, b: float, h: float) -> str:
    """One value a side past the rule's threshold: regression, improvement or within threshold."""
    delta = h - b
    assert rule.threshold is not None, "only gated rules have a direction"
    limit = rule.threshold * abs(b) if rule.relative else rule.threshold
    if abs(delta) <= limit:
        return WITHIN
    worse = delta > 0 if rule.higher_is_worse else delta < 0
    return REGRESSION if worse else IMPROVEMENT


def representative(values: list[float]) -> float:
    """The value shown for a side: the lower median, an observed value (min for timings is separate)."""
    s = sorted(values)
    return s[(len(s) - 1) // 2]


def mann_whitney_p(a: list[float], b: list[float]) -> float:
    """Two-sided p-value of the Mann-Whitney U test, normal approximation with tie correction
    and continuity correction (what scipy.stats.mannwhitneyu gives with method='asymptotic')."""
    n1, n2 = len(a), len(b)
    pooled = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks = [0.0] * len(pooled)
    tie_term = 0.0
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        t = j - i + 1
        tie_term += t ** 3 - t
        i = j + 1
    r1 = sum(r for r, (_, side) in zip(ranks, pooled, strict=True) if side == 0)
    u1 = r1 - n1 * (n1 + 1) / 2
    n = n1 + n2
    mu = n1 * n2 / 2
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    if sigma == 0:
        return 1.0
    z = (abs(u1 - mu) - 0.5) / sigma
    return min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2)))
