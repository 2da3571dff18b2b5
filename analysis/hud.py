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
    samples by its metric's one rule), and its verdict by HUD's thresholds, a measured number only with
    two samples of each workload a side (hud_summary); a regression gates as a workload's does."""
    suite: str | None
    group: str  # the mode, dtype, backend, device and variant the suite ran in
    metric: str
    base: float | None
    head: float | None
    verdict: str
    base_workloads: int | None
    head_workloads: int | None
    how: str = ""  # a measured number: the fewest samples a workload of it has on each side


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
        counted = _break_rows(rows)
        for i, row in enumerate(rows):
            found = {k: row[k] for k in ("suite", "backend", "device", "mode", "dtype", "variant")}
            found["harness"] = row["kind"]
            parts = {k: str(v) for k, v in found.items() if v is not None and k not in compared}
            key = model_key(row["model"], parts)
            sample: Row = {"run_id": row["holder_run_id"], "model": row["model"], "parts": parts}
            for m in HARNESS:
                measured = m == "compilation_latency" or (m == "accuracy") == (row["kind"] == "accuracy")
                sample[m] = [row[m]] if measured and row[m] is not None else None
            # Dynamo's graph-break count, a workload once a run, on the row run_metrics reads it from
            sample["graph_breaks"] = [row["graph_breaks"]] if i in counted and row["graph_breaks"] is not None else None
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


def _break_rows(rows: list[Row]) -> set[int]:
    """The rows (their indexes) whose graph_breaks is a run's count of a workload, as run_metrics reads a
    run of harness results alone (views/15_run_rollups_of.sql: its latest accuracy row's count, else its
    latest performance row's, by file and line), so compare gates the count run_metrics holds."""
    latest: dict[tuple[str, object, object, object, str], int] = {}
    for i, row in enumerate(rows):
        key = (row["holder_run_id"], row["suite"], row["backend"], row["workload"], row["kind"])
        j = latest.get(key)
        if j is None or (row["file"], row["line"]) > (rows[j]["file"], rows[j]["line"]):
            latest[key] = i
    chosen = set()
    for (run, suite, backend, workload, kind), i in latest.items():
        accuracy = latest.get((run, suite, backend, workload, "accuracy"))
        counted_by = "accuracy" if accuracy is not None and rows[accuracy]["graph_breaks"] is not None else "performance"
        if kind == counted_by:
            chosen.add(i)
    return chosen


def hud_summary(con: Reader, base_runs: list[str], head_runs: list[str], rules: dict[str, regress.Rule],
                harness: tuple[list[Row], list[Row]], compared: frozenset[str] | set[str] = frozenset(),
                model: str | None = None) -> list[HudRow]:
    """HUD's suite numbers of each side's runs (compare/hud_summary), paired by suite and what it ran
    in (less what the selectors compare: a device, a variant, a backend), each judged once by the rule
    of the metric it aggregates (HUD's thresholds: pass rate 0.9x, geomean speedup and compression ratio
    0.95x, compilation latency 1.15x). The pass rate is exact (an accuracy check, a model that ran or
    not); a measured number (speedup, compilation latency, compression ratio) is an aggregate of its
    workloads' measurements, and is judged as they are (regress.judge's timing rule): with fewer than two
    samples of a workload on a side it is `insufficient data`, as HUD judges a window of nights, never
    one night against one. `harness`: each side's harness rows (compare/harness), whose samples say so."""
    rows = run_query(con, "compare/hud_summary", base_runs=",".join(base_runs), head_runs=",".join(head_runs),
                     model=model)
    parts = [k for k in ("mode", "dtype", "backend", "device", "variant") if k not in compared]
    sides: dict[tuple[str | None, str], dict[str, Row]] = defaultdict(dict)
    for r in rows:
        sides[(r["suite"], _group(r, parts))][r["side"]] = r
    fewest = [_fewest_samples(side_rows, parts, model) for side_rows in harness]
    out = []
    for (suite, group), side in sorted(sides.items(), key=lambda kv: tuple(str(x) for x in kv[0])):
        b, h = side.get("base") or {}, side.get("head") or {}
        for metric, rule_name in HUD_METRICS.items():
            vb, vh = _stable(b.get(metric)), _stable(h.get(metric))
            rule = rules[rule_name]
            nb, nh = (f.get((suite, group, rule_name), 0) for f in fewest)
            how = f"n={nb}/{nh}" if rule.timing else "exact"
            if vb is None or vh is None:
                verdict = regress.MISSING
            elif rule.timing and min(nb, nh) < 2:
                verdict = regress.INSUFFICIENT
            elif vb == vh:
                verdict = regress.UNCHANGED
            elif rule.threshold is None:
                verdict = regress.NOT_GATED
            else:
                verdict = regress.direction(rule, float(vb), float(vh))
            out.append(HudRow(suite, group, metric, vb, vh, verdict, b.get("workloads"), h.get("workloads"), how))
    return out


def _group(row: Row, parts: list[str]) -> str:
    """What a suite ran in, as the suite rows are shown: `mode=infer dtype=fp32 backend=inductor device=cpu`."""
    return " ".join(f"{k}={row[k]}" for k in parts if row[k] is not None)


def _fewest_samples(rows: list[Row], parts: list[str], model: str | None) -> dict[tuple[str | None, str, str], int]:
    """(suite, group, metric) -> the fewest samples any workload of the suite has of the metric on this
    side (the measurements its value is made of, as harness_models_of takes them: the performance rows'
    speedups above 0, compression ratios, compilation latencies, else the accuracy rows' latencies)."""
    counts: dict[tuple[str | None, str, str], dict[tuple[object, object, str], int]] = defaultdict(dict)
    for kind in ("performance", "accuracy"):
        for row in rows:
            if row["kind"] != kind or (model is not None and row["model"] != model):
                continue
            for metric in ("speedup", "compilation_latency", "compression_ratio"):
                if not row[metric] or (kind == "accuracy" and metric != "compilation_latency"):
                    continue
                per_workload = counts[(row["suite"], _group(row, parts), metric)]
                workload = (row["backend"], row["workload"], kind)
                if kind == "accuracy" and (row["backend"], row["workload"], "performance") in per_workload:
                    continue  # the performance run's latency is the one taken
                per_workload[workload] = per_workload.get(workload, 0) + 1
    return {key: min(found.values()) for key, found in counts.items()}


def _stable(v: float | None) -> float | None:
    """A mean or geomean to 12 significant digits: DuckDB's parallel aggregation may sum in another
    order from run to run, which moves the last bits, and the output must be the same every run."""
    return float(f"{v:.12g}") if isinstance(v, float) else v
