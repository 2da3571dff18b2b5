"""HUD's suite numbers: the benchmark harness's measurements of the compared runs, and the suite
summary HUD shows, judged by HUD's rules."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from inductor_warehouse.analysis import regress
from inductor_warehouse.analysis.metrics import HARNESS
from inductor_warehouse.analysis.canned_rows import Reader, Row, run_query
from inductor_warehouse.analysis.words import model_key


# HUD's suite numbers (compare/hud_summary), each judged with the rule of the per-workload metric it aggregates
HUD_METRICS = {"pass_rate": "pass_rate", "geomean_speedup": "speedup", "compilation_latency": "compilation_latency",
               "compression_ratio": "compression_ratio"}


@dataclass
class HudRow:
    """One of HUD's suite numbers on both sides (the harness rows of the compared runs, each workload's
    samples by its metric's one rule), and its verdict by HUD's rule: one point a side, as HUD judges
    it; a regression gates as a workload's does."""
    suite: str | None
    group: str  # the mode, dtype, backend, device and variant the suite ran in
    metric: str
    base: float | None
    head: float | None
    verdict: str
    base_workloads: int | None
    head_workloads: int | None


def harness_rows(con: Reader, run_ids: Iterable[str]) -> list[Row]:
    """The harness rows that measured the runs or that they hold (compare/harness)."""
    ids = sorted(set(run_ids))
    return run_query(con, "compare/harness", runs=",".join(ids)) if ids else []


def harness_numbers(con: Reader, runs: list[Row], rows: list[Row] | None = None) -> int:
    """Each run's benchmark harness samples (accuracy, speedup, compilation latency, compression
    ratio: a list a metric, one value a harness row that measured it), set on its dict; how many runs
    have any. A side's samples are judged by each metric's one rule (regress.best)."""
    if not runs:
        return 0
    rows = harness_rows(con, [r["run_id"] for r in runs]) if rows is None else rows
    by_run: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        if row["linked_run_id"] is not None:
            by_run[row["linked_run_id"]].append(row)
    for r in runs:
        found = by_run.get(r["run_id"], [])
        for m in HARNESS:
            kind = "accuracy" if m == "accuracy" else "performance"
            values = [x[m] for x in found if x["kind"] == kind and x[m] is not None]
            if m == "compilation_latency" and not values:  # the accuracy run's, where nothing timed it
                values = [x[m] for x in found if x["kind"] == "accuracy" and x[m] is not None]
            r[m] = values or None
    return sum(1 for r in runs if r["run_id"] in by_run)


def harness_set_pairs(rows_b: list[Row], rows_h: list[Row],
                      compared: set[str]) -> tuple[dict[str, list[Row]], dict[str, list[Row]]]:
    """Harness rows no compiled workload measured (a run of harness results alone: a CI job's CSVs,
    a nightly's), as workloads of their own on each side: key -> its rows, each row a sample as a
    run's numbers are (harness_numbers), keyed by suite, backend, the harness's mode (performance or
    accuracy) and the model's workload (device, mode, dtype, variant: harness_rows.workload), less
    what the selectors compare; shown with the parts that tell a model's workloads apart."""
    sides: list[dict[str, list[Row]]] = []
    for rows in (rows_b, rows_h):
        groups: dict[str, list[Row]] = defaultdict(list)
        for row in rows:
            found = {k: row[k] for k in ("suite", "backend", "device", "mode", "dtype", "variant")}
            found["harness"] = row["kind"]
            parts = {k: str(v) for k, v in found.items() if v is not None and k not in compared}
            key = model_key(row["model"], parts)
            sample: Row = {"run_id": row["holder_run_id"], "model": row["model"], "parts": parts}
            for m in HARNESS:
                measured = m == "compilation_latency" or (m == "accuracy") == (row["kind"] == "accuracy")
                sample[m] = [row[m]] if measured and row[m] is not None else None
            groups[key].append(sample)
        sides.append(groups)
    values: dict[tuple[str, str], set[str | None]] = defaultdict(set)
    firsts = [samples[0] for groups in sides for samples in groups.values()]
    keys = {k for s in firsts for k in s["parts"]}
    for s in firsts:
        for k in keys:
            values[(s["model"], k)].add(s["parts"].get(k))
    for s in firsts:
        config = {k: v for k, v in s["parts"].items() if len(values[(s["model"], k)]) > 1}
        for groups in sides:
            for sample in groups.get(model_key(s["model"], s["parts"]), ()):
                sample["config"] = config
    return sides[0], sides[1]


def hud_summary(con: Reader, base_runs: list[str], head_runs: list[str], rules: dict[str, regress.Rule],
                compared: frozenset[str] | set[str] = frozenset(), model: str | None = None) -> list[HudRow]:
    """HUD's suite numbers of each side's runs (compare/hud_summary), paired by suite and what it ran
    in (less what the selectors compare: a device, a variant, a backend), each judged once, exactly,
    by the rule of the metric it aggregates (HUD's thresholds: pass rate 0.9x, geomean speedup and
    compression ratio 0.95x, compilation latency 1.15x)."""
    rows = run_query(con, "compare/hud_summary", base_runs=",".join(base_runs), head_runs=",".join(head_runs),
                     model=model)
    parts = [k for k in ("mode", "dtype", "backend", "device", "variant") if k not in compared]
    sides: dict[tuple[str | None, str], dict[str, Row]] = defaultdict(dict)
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


def _stable(v: float | None) -> float | None:
    """A mean or geomean to 12 significant digits: DuckDB's parallel aggregation may sum in another
    order from run to run, which moves the last bits, and the output must be the same every run."""
    return float(f"{v:.12g}") if isinstance(v, float) else v
