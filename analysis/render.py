"""Rendering `iwh compare` results: a table for people, CSV (one row per model), JSON, markdown
for a PR comment. Pure functions of the dataclasses of analysis/compare.py, metrics.py and kernel_diff.py."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson
import polars as pl

from inductor_warehouse.analysis import regress
from inductor_warehouse.analysis.kernel_code import NORMALISED
from inductor_warehouse.analysis.compare import CompareResult
from inductor_warehouse.analysis.kernel_diff import KernelDiff
from inductor_warehouse.analysis.metrics import METRICS, RATES, STRUCTURAL, SummaryRow
from inductor_warehouse.schema import output
from inductor_warehouse.schema.words import plural

if TYPE_CHECKING:
    from inductor_warehouse.analysis.changes import SeriesReport

COUNTS = tuple(m for m in STRUCTURAL if m not in RATES)

BOTH_SIDES, BASE_ONLY, HEAD_ONLY = "compared", "base only", "head only"


def wide_frame(result: CompareResult) -> pl.DataFrame:
    """One row per workload: base, head, delta, % and verdict of every metric as plain cells."""
    rows = []
    for p in result.pairs:
        row: dict[str, object] = {"model": p.model, "config": _config(p.config), "workload": p.workload, "status": BOTH_SIDES,
                     "base_runs": " ".join(p.base_runs), "head_runs": " ".join(p.head_runs)}
        for m, d in p.metrics.items():
            row |= {f"{m}_base": _num(m, d.base), f"{m}_head": _num(m, d.head), f"{m}_delta": _num(m, d.delta),
                    f"{m}_pct": _round(d.pct, 2), f"{m}_verdict": d.verdict}
        rows.append(row)
    for status, keys in ((BASE_ONLY, result.base_only), (HEAD_ONLY, result.head_only)):
        rows += [{"model": k, "status": status} for k in keys]
    schema: dict[str, type[pl.DataType]] = {"model": pl.String, "config": pl.String, "workload": pl.String,
                                            "status": pl.String, "base_runs": pl.String, "head_runs": pl.String}
    for m in METRICS:
        t: type[pl.DataType] = pl.String if m == "accuracy" else pl.Int64 if m in COUNTS else pl.Float64
        schema |= {f"{m}_base": t, f"{m}_head": t, f"{m}_delta": pl.Float64 if t == pl.String else t,
                   f"{m}_pct": pl.Float64, f"{m}_verdict": pl.String}
    return pl.DataFrame(rows, schema=schema)


def long_frame(result: CompareResult, changed_only: bool = False) -> pl.DataFrame:
    """One row per workload and metric: base, head, delta, % (as text, with its sign and %), verdict
    and the test that decided. Counts print as integers, a missing value as nothing."""
    rows = []
    for p in result.pairs:
        for m, d in p.metrics.items():
            # a row of nothing is left out, but never the one that carries a verdict (a side that did not finish)
            quiet = d.verdict not in (regress.REGRESSION, regress.IMPROVEMENT)
            if quiet and ((d.base is None and d.head is None) or (d.base == 0 and d.head == 0)):
                continue
            if changed_only and d.verdict in ("unchanged", "n/a"):
                continue
            rows.append({"workload": p.key, "metric": m, "base": _shown(m, d.base), "head": _shown(m, d.head),
                         "delta": _shown(m, d.delta, signed=True), "pct": percent(d.pct), "verdict": d.verdict,
                         "how": d.how})
    return pl.DataFrame(rows, schema={"workload": pl.String, "metric": pl.String, "base": pl.String,
                                      "head": pl.String, "delta": pl.String, "pct": pl.String,
                                      "verdict": pl.String, "how": pl.String})


def summary_frame(result: CompareResult) -> pl.DataFrame:
    """One row per metric over the workloads on both sides: totals (not for rates), the geomean of
    head/base, how many workloads regressed or improved."""
    rows = [{"metric": s.metric, "workloads": s.models, "base_total": _shown(s.metric, s.base_total),
             "head_total": _shown(s.metric, s.head_total), "geomean_ratio": geomean_text(s),
             "regressions": s.regressions, "improvements": s.improvements}
            for s in result.summary if s.models]
    return pl.DataFrame(rows, schema={"metric": pl.String, "workloads": pl.Int64, "base_total": pl.String,
                                      "head_total": pl.String, "geomean_ratio": pl.String,
                                      "regressions": pl.Int64, "improvements": pl.Int64})


def geomean_text(s: SummaryRow) -> str | None:
    """`1.130x`, saying how many workloads that moved it leaves out (0 on one side has no ratio), so
    that a geomean of the rest never reads as the whole: `1.000x (1 left out: 0 on one side)`; likewise
    those whose verdict is not comparable (a warm side against a compiled one): `none (1 left out: not
    comparable)`, `(3 left out: 1 with 0 on one side, 2 not comparable)`."""
    ratio = None if s.geomean_ratio is None else f"{s.geomean_ratio:.3f}x"
    # (count, the reason alone, the reason after its count)
    reasons = [r for r in ((s.geomean_left_out, "0 on one side", "with 0 on one side"),
                           (s.geomean_not_comparable, "not comparable", "not comparable")) if r[0]]
    if not reasons:
        return ratio
    why = reasons[0][1] if len(reasons) == 1 else ", ".join(f"{n} {counted}" for n, _, counted in reasons)
    return f"{ratio or 'none'} ({sum(r[0] for r in reasons)} left out: {why})"


def hud_frame(result: CompareResult) -> pl.DataFrame:
    """HUD's suite numbers on both sides (the harness rows of the compared runs) and HUD's verdict."""
    rows = [{"suite": r.suite, "ran_in": r.group or None, "metric": r.metric, "base": _shown(r.metric, r.base),
             "head": _shown(r.metric, r.head),
             "pct": percent(None if r.base in (None, 0) or r.head is None else 100.0 * (r.head - r.base) / abs(r.base)),
             "verdict": r.verdict, "workloads": f"{r.base_workloads or 0}/{r.head_workloads or 0}", "how": r.how}
            for r in result.hud]
    return pl.DataFrame(rows, schema={"suite": pl.String, "ran_in": pl.String, "metric": pl.String, "base": pl.String,
                                      "head": pl.String, "pct": pl.String, "verdict": pl.String,
                                      "workloads": pl.String, "how": pl.String})


def failures_frame(result: CompareResult) -> pl.DataFrame:
    """The compile failures whose cause one side has and the other lacks: `new` (head only: a
    regression) and `gone` (base only), with the frame and whether it then ran eagerly."""
    rows = [{"workload": p.key, "failure": status, "compile_id": f.compile_id, "frame": f.frame,
             "ran_eagerly": f.fallback, "cause": f.cause if f.cause != f.reason else None, "reason": f.reason,
             "run": f.run_id}
            for p in result.pairs for status, failures in (("new", p.new_failures), ("gone", p.fixed_failures))
            for f in failures]
    return pl.DataFrame(rows, schema={"workload": pl.String, "failure": pl.String, "compile_id": pl.String,
                                      "frame": pl.String, "ran_eagerly": pl.Boolean, "cause": pl.String,
                                      "reason": pl.String, "run": pl.String})


def kernel_frame(diff: KernelDiff, include_unchanged: bool = False) -> pl.DataFrame:
    """One row per kernel pair (or kernel on one side): status, whether its code changed, and what
    paired it (name, source hash, structure)."""
    rows = [{"status": k.status, "phase": k.phase, "generated": k.generated, "category": k.category,
             "base_kernel": k.base_kernel, "head_kernel": k.head_kernel,
             "code_changed": k.code_changed if k.base_kernel and k.head_kernel else None, "paired_by": k.how or None,
             "signature": k.signature}
            for k in diff.kernels if include_unchanged or k.status != "unchanged"]
    return pl.DataFrame(rows, schema={"status": pl.String, "phase": pl.String, "generated": pl.Boolean,
                                      "category": pl.String, "base_kernel": pl.String, "head_kernel": pl.String,
                                      "code_changed": pl.Boolean, "paired_by": pl.String, "signature": pl.String})


def fusion_frame(diff: KernelDiff) -> pl.DataFrame:
    rows = [{"change": f.kind, "graph": f.graph, "base_groups": " ".join(f.base_groups),
             "head_groups": " ".join(f.head_groups)} for f in diff.fusions]
    return pl.DataFrame(rows, schema={"change": pl.String, "graph": pl.String, "base_groups": pl.String,
                                      "head_groups": pl.String})


def autotune_frame(diff: KernelDiff, include_same: bool = False) -> pl.DataFrame:
    rows = [{"status": a.status, "op": a.op, "shapes": a.shapes, "base_winner": a.base_winner,
             "head_winner": a.head_winner, "base_ms": a.base_ms, "head_ms": a.head_ms,
             "base_config": a.base_config, "head_config": a.head_config}
            for a in diff.autotune if include_same or a.status != "unchanged"]
    return pl.DataFrame(rows, schema={"status": pl.String, "op": pl.String, "shapes": pl.String,
                                      "base_winner": pl.String, "head_winner": pl.String, "base_ms": pl.Float64,
                                      "head_ms": pl.Float64, "base_config": pl.String, "head_config": pl.String})


def triton_frame(diff: KernelDiff) -> pl.DataFrame:
    """The Triton kernels whose launch config changed: each side's warps, stages, shared memory, registers."""
    rows = [{"kernel": t.head_kernel if t.head_kernel == t.base_kernel else f"{t.base_kernel} -> {t.head_kernel}",
             "num_warps": _pair(t.base_num_warps, t.head_num_warps), "num_stages": _pair(t.base_num_stages, t.head_num_stages),
             "shared_bytes": _pair(t.base_shared_bytes, t.head_shared_bytes), "n_regs": _pair(t.base_n_regs, t.head_n_regs),
             "code_changed": t.source_changed}
            for t in diff.triton]
    return pl.DataFrame(rows, schema={"kernel": pl.String, "num_warps": pl.String, "num_stages": pl.String,
                                      "shared_bytes": pl.String, "n_regs": pl.String, "code_changed": pl.Boolean})


def _pair(base: object, head: object) -> str:
    """`8 -> 4`, `1` when both sides agree, `?` for a side the artifacts do not say."""
    b, h = ("?" if v is None else str(v) for v in (base, head))
    return b if b == h else f"{b} -> {h}"


def to_dict(result: CompareResult, diff: KernelDiff | None = None,
            codes: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    out = dataclasses.asdict(result)
    for pair, p in zip(out["pairs"], result.pairs, strict=True):
        for m, d in p.metrics.items():
            pair["metrics"][m] |= {"delta": d.delta, "pct": d.pct}
    if diff is not None:
        out["kernel_diff"] = dataclasses.asdict(dataclasses.replace(diff, kernel_rows={})) | {"counts": diff.counts()}
        del out["kernel_diff"]["kernel_rows"]
        if codes:
            out["kernel_diff"]["code"] = [{"kernel": label, "diff": text} for label, text in codes]
    return out


def render(result: CompareResult, fmt: str, diff: KernelDiff | None = None,
           codes: list[tuple[str, str]] | None = None) -> str:
    if fmt == "json":
        return orjson.dumps(to_dict(result, diff, codes), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS,
                            default=_jsonable).decode() + "\n"
    if fmt == "csv":
        if diff is not None:
            return kernel_frame(diff, include_unchanged=True).write_csv()
        return wide_frame(result).write_csv()
    md = fmt == "markdown"
    show: Callable[[pl.DataFrame], str] = output.markdown if md else output.table
    # text for people fits the terminal as its tables do; markdown leaves wrapping to its viewer
    line: Callable[[str], str] = (lambda t: t) if md else output.paragraph
    h: Callable[[str], str] = (lambda t: f"\n### {t}\n\n") if md else (lambda t: f"\n{line(t)}\n")
    parts = [line(f"{'## ' if md else ''}compare: base {result.base} -> head {result.head} "
                  f"({result.headline()})") + "\n"]
    if result.regressions:
        parts.append(("\n**" if md else "\n") + line(f"{plural(len(result.regressions), 'regression')}: "
                     + ", ".join(f"{k} {m}" for k, m in result.regressions)) + ("**\n" if md else "\n"))
    if md and (result.warnings or result.notes):
        parts.append("\n" + "".join(f"> warning: {w}\n" for w in result.warnings)
                     + "".join(f"> note: {n}\n" for n in result.notes))
    failures = failures_frame(result)
    if len(failures):
        parts += [h("compile failures of a cause one side lacks (new: a regression)"), show(failures)]
    parts += [h("summary (workloads on both sides; geomean of head/base over those above 0 on both)"),
              show(summary_frame(result))]
    if result.hud:
        parts += [h("benchmark harness: HUD's suite numbers of the compared runs (each workload's samples by its "
                    "metric's one rule, then HUD's rule; a measured number needs two samples of each workload a "
                    "side; gated)"), show(hud_frame(result))]
    parts += [h("per workload" + (": changes only" if md else "")), show(long_frame(result, changed_only=md))]
    if result.base_only or result.head_only:
        parts.append(h("not compared (one side only)"))
        parts += [line(f"- base only: {k}") + "\n" for k in result.base_only]
        parts += [line(f"- head only: {k}") + "\n" for k in result.head_only]
    if diff is not None:
        parts.append(_kernel_section(diff, codes, md, show, h))
    return "".join(parts)


def _kernel_section(diff: KernelDiff, codes: list[tuple[str, str]] | None, md: bool,
                    show: Callable[[pl.DataFrame], str], h: Callable[[str], str]) -> str:
    counts = diff.counts()
    externs = diff.counts(generated_only=False)
    recoded = sum(1 for i in diff.code_changes if diff.kernels[i].status == "renamed" and diff.kernels[i].generated)
    parts = [h(f"kernels of {diff.model}: base run {diff.base_run} -> head run {diff.head_run}"),
             "generated kernels: " + ", ".join(f"{n} {s}" for s, n in counts.items())
             + (f" ({recoded} of the renamed with new code)" if recoded else "")
             + "; with extern calls: " + ", ".join(f"{n} {s}" for s, n in externs.items()) + "\n"]
    parts += [f"note: {n}\n" for n in diff.notes]
    parts.append(show(kernel_frame(diff)))
    if diff.fusions:
        parts += [h("fusion groups split or merged"), show(fusion_frame(diff))]
    if diff.triton:
        parts += [h(f"Triton launch configs: {plural(len(diff.triton), 'kernel')} changed warps, stages or shared memory"),
                  show(triton_frame(diff))]
    if diff.autotune:
        moved = sum(a.status != "unchanged" for a in diff.autotune)
        parts.append(h(f"autotune winners: {moved} of {len(diff.autotune)} ops changed, appeared or went"))
        if moved:
            parts.append(show(autotune_frame(diff)))
    if codes:
        parts.append(f"code diffs: each side's own code as its run wrote it, {NORMALISED}\n")
    for name, text in codes or ():
        parts.append(h(f"code diff: {name}"))
        parts.append(f"```diff\n{text}```\n" if md else text)
    return "".join(parts)


def _jsonable(v: object) -> list[Any]:
    """Sets and frozensets as sorted lists: the same JSON every run."""
    if isinstance(v, (set, frozenset)):
        return sorted(v)
    raise TypeError(type(v).__name__)


def _num(metric: str, v: float | str | None) -> float | str | None:
    return None if v is None else (int(v) if metric in COUNTS else v)


def _shown(metric: str, v: float | str | None, signed: bool = False) -> str | None:
    """A metric's value for people: counts as integers, rates as percentages (a delta of rates in
    percentage points), others to 4 significant digits, texts (the harness's accuracy) as they are,
    NULL as nothing."""
    if v is None or isinstance(v, str):
        return v
    sign = "+" if signed and v > 0 else ""
    if metric in RATES:
        return f"{sign}{100 * v:.1f} pp" if signed else f"{100 * v:.1f}%"
    if metric in COUNTS or float(v).is_integer():
        return f"{sign}{int(v):,}"
    return f"{sign}{v:.4g}" if abs(v) < 1e4 else f"{sign}{v:,.1f}"


def percent(v: float | None) -> str | None:
    """`+17.2%`, `-3%`, `0%`; nothing when there is no percentage (a base of 0)."""
    if v is None:
        return None
    return "0%" if round(v, 1) == 0 else f"{v:+.1f}%".replace(".0%", "%")


def _config(config: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(config.items()))


def _round(v: float | None, n: int) -> float | None:
    return None if v is None else round(v, n)


def changes_frame(report: SeriesReport, top: int | None = None, table: bool = False) -> pl.DataFrame:
    """`iwh changes`: one row per metric that changed at a change point, biggest effect first
    (SeriesReport.ranked); the first `top` rows (all with None). `commits`: the torch commits between
    the two builds, and for scripts (table False) GitHub's compare URL of them."""
    rows = [{"series": p.series, "position": p.position, "before": p.before_at, "after": p.after_at,
             "metric": c.metric, "before_value": _shown(c.metric, c.before) if c.metric in RATES else _value(c.before),
             "after_value": _shown(c.metric, c.after) if c.metric in RATES else _value(c.after), "detail": c.detail,
             "before_run": p.before_run, "after_run": p.after_run, "commits": p.commits,
             "compare_url": p.compare_url}
            for p, c in report.ranked()[:top]]
    frame = pl.DataFrame(rows, schema={"series": pl.String, "position": pl.Int64, "before": pl.String,
                                       "after": pl.String, "metric": pl.String, "before_value": pl.String,
                                       "after_value": pl.String, "detail": pl.String, "before_run": pl.String,
                                       "after_run": pl.String, "commits": pl.String, "compare_url": pl.String})
    return frame.drop("compare_url") if table else frame  # a table names the range; its URL goes below it


def _value(v: float | str | None) -> str | None:
    return None if v is None else (f"{v:.4g}" if isinstance(v, float) and not v.is_integer() else str(int(v))
                                   if isinstance(v, float) else str(v))
