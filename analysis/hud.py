"""HUD's suite numbers: the benchmark harness's measurements of the compared runs, and the suite
summary HUD shows, judged by HUD's rules."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from inductor_warehouse.analysis import regress
from inductor_warehouse.analysis.metrics import HARNESS
from inductor_warehouse.analysis.rows import run_query


# HUD's suite numbers (compare/hud_summary), each judged with the rule of the per-workload metric it aggregates
HUD_METRICS = {"pass_rate": "pass_rate", "geomean_speedup": "speedup", "compilation_latency": "compilation_latency",
               "compression_ratio": "compression_ratio"}


@dataclass
class HudRow:
    """One of HUD's suite numbers on both sides (the harness rows of the compared runs), and its
    verdict by HUD's rule: one point a side, as HUD judges it; reported, not gated (the workloads'
    own metrics gate)."""
    suite: str | None
    group: str  # the mode, dtype, backend, device and variant the suite ran in
    metric: str
    base: float | None
    head: float | None
    verdict: str
    base_workloads: int | None
    head_workloads: int | None


def harness_numbers(con, runs: list[dict]) -> int:
    """Each run's benchmark harness numbers (compare/harness: accuracy, speedup, compilation latency,
    compression ratio), set on its dict where a harness row measured it; how many runs have any."""
    if not runs:
        return 0
    numbers = {r["run_id"]: r for r in run_query(con, "compare/harness", runs=",".join(sorted({r["run_id"] for r in runs})))}
    for r in runs:
        found = numbers.get(r["run_id"], {})
        for m in HARNESS:
            r[m] = found.get(m)
    return len(numbers)


def hud_summary(con, base_runs: list[str], head_runs: list[str], rules: dict[str, regress.Rule],
                compared: set[str] = frozenset()) -> list[HudRow]:
    """HUD's suite numbers of each side's runs (compare/hud_summary), paired by suite and what it ran
    in (less what the selectors compare: a device, a variant, a backend), each judged once, exactly,
    by the rule of the metric it aggregates (HUD's thresholds: pass rate 0.9x, geomean speedup and
    compression ratio 0.95x, compilation latency 1.15x)."""
    rows = run_query(con, "compare/hud_summary", base_runs=",".join(base_runs), head_runs=",".join(head_runs))
    parts = [k for k in ("mode", "dtype", "backend", "device", "variant") if k not in compared]
    sides: dict[tuple, dict[str, dict]] = defaultdict(dict)
    for r in rows:
        key = (r["suite"], " ".join(f"{k}={r[k]}" for k in parts if r[k] is not None))
        sides[key][r["side"]] = r
    out = []
    for (suite, group), side in sorted(sides.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        b, h = side.get("base") or {}, side.get("head") or {}
        for metric, rule_name in HUD_METRICS.items():
            vb, vh = _stable(b.get(metric)), _stable(h.get(metric))
            rule = rules[rule_name]
            if vb is None or vh is None:
                verdict = regress.MISSING
            elif vb == vh:
                verdict = regress.UNCHANGED
            elif rule.threshold is None:
                verdict = regress.NOT_GATED
            else:
                verdict = regress.direction(rule, float(vb), float(vh))
            out.append(HudRow(suite, group, metric, vb, vh, verdict, b.get("workloads"), h.get("workloads")))
    return out


def _stable(v):
    """A mean or geomean to 12 significant digits: DuckDB's parallel aggregation may sum in another
    order from run to run, which moves the last bits, and the output must be the same every run."""
    return float(f"{v:.12g}") if isinstance(v, float) else v
