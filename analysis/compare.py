"""`iwh compare`: two selections of runs, model by model, down to the kernels.

Computing lives here and returns plain dataclasses (the dashboard calls `compare` and
`kernel_diff`); `analysis/render.py` turns them into tables, CSV, JSON or markdown; the rules
that call a change a regression are in `analysis/regress.py`; the command is
`cli/commands/compare.py`. The SQL is in schema/queries/compare/.

Like for like: runs pair when their workloads agree (views/12_workloads.sql: the model plus the
workload labels mode, dtype, variant, batch and the device; `--pair-on` names others). A label a
selector names (`variant=default` vs `variant=aggressive_fusion`, `device=cpu` vs `device=cuda`) is
the compared variable, not part of the workload. Workloads on one side only are listed apart and
never enter the summary. Several runs of one workload on a side are samples.
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import orjson

from inductor_warehouse.analysis import regress
from inductor_warehouse.ingest.normalize import kernel_signature
from inductor_warehouse.schema import queries as canned

# compile events as views/20_run_metrics.sql defines them: breaks and recompiles of user frames,
# library_* those of library frames, failures and fallbacks to eager of every frame
EVENTS = ("failures", "fallbacks", "restarts", "graph_breaks", "recompiles", "library_graph_breaks",
          "library_recompiles")
STRUCTURAL = ("kernels", "extern_kernels", "pre_fusion_nodes", "post_fusion_nodes", "fusion_rate",
              *EVENTS, "fx_cache_hit_rate")
TIMINGS = ("compile_s", "kernel_us")
# the benchmark harness's numbers of a run (schema/queries/compare/harness.sql), where a harness row measured it
HARNESS = ("accuracy", "speedup", "compilation_latency", "compression_ratio")
METRICS = STRUCTURAL + TIMINGS + HARNESS
RATES = ("fusion_rate", "fx_cache_hit_rate")  # a sum of rates means nothing: the summary shows their geomean only
UNSUMMED = RATES + HARNESS  # nor of speedups, latencies of different models, or pass/fail texts
# HUD's suite numbers (compare/hud_summary), each judged with the rule of the per-workload metric it aggregates
HUD_METRICS = {"pass_rate": "pass_rate", "geomean_speedup": "speedup", "compilation_latency": "compilation_latency",
               "compression_ratio": "compression_ratio"}
# selector words that name a run column; any other key is a label
COLUMN_KEYS = {"compiler": "compiler", "compiler_version": "compiler", "run": "run", "run_id": "run",
               "device": "device", "backend": "backend", "model": "model"}
ENV_COLUMNS = ("compiler_version", "device", "device_name", "backend", "triton_version", "cuda_version")


class SelectorError(ValueError):
    """A selector that cannot be read or picks nothing; the message says what exists."""


@dataclass(frozen=True)
class Selector:
    text: str
    params: dict
    labels: dict

    @property
    def keys(self) -> set[str]:
        return set(self.params) | set(self.labels)


def parse_selector(text: str) -> Selector:
    """`compiler=2.13.0+cpu`, `variant=default`, `mode=train,dtype=fp32`, a run id, or a mix."""
    params, labels = {}, {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        if not sep:
            params["run"] = part
            continue
        key, value = key.strip(), value.strip()
        if not key or not value:
            raise SelectorError(f"selector part {part!r} is not key=value")
        if key in COLUMN_KEYS:
            params[COLUMN_KEYS[key]] = value
        else:
            labels[key] = value
    if not params and not labels:
        raise SelectorError(f"empty selector {text!r}: give compiler=V, a label k=v or a run id")
    return Selector(text, params, labels)


@dataclass
class MetricDelta:
    metric: str
    base: float | str | None  # a text for the harness's accuracy (pass, fail_accuracy, ...)
    head: float | str | None
    verdict: str
    how: str = ""

    @property
    def delta(self) -> float | None:
        if not isinstance(self.base, (int, float)) or not isinstance(self.head, (int, float)):
            return None
        return self.head - self.base

    @property
    def pct(self) -> float | None:
        d = self.delta
        return None if d is None or not self.base else 100.0 * d / abs(self.base)


@dataclass
class Failure:
    """A failed compile of one run: its cause (registry id or normalised reason), the reason in
    one line, whether the frame then ran eagerly, and where."""
    run_id: str
    compile_id: str | None
    cause: str
    reason: str
    fallback: bool
    frame: str | None  # file:line


@dataclass
class ModelPair:
    model: str
    config: dict  # the workload labels beyond the model that tell this pair from the others shown
    base_runs: list[str]
    head_runs: list[str]
    metrics: dict[str, MetricDelta]
    workload: str = ""  # the full workload key the runs paired on
    new_failures: list[Failure] = field(default_factory=list)  # head failures of a cause the base lacks
    fixed_failures: list[Failure] = field(default_factory=list)  # base failures of a cause the head lacks

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


@dataclass
class CompareResult:
    base: str
    head: str
    pairs: list[ModelPair]
    base_only: list[str]
    head_only: list[str]
    summary: list[SummaryRow]
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what a release difference explains; not warnings
    hud: list[HudRow] = field(default_factory=list)  # when both sides have benchmark harness rows

    @property
    def regressions(self) -> list[tuple[str, str]]:
        return [(p.key, m) for p in self.pairs for m in p.regressions]

    @property
    def models(self) -> int:
        return len({p.model for p in self.pairs})

    def headline(self) -> str:
        """`16 workloads of 6 models on both sides`, in words that agree with the numbers."""
        return (f"{plural(len(self.pairs), 'workload')} of {plural(self.models, 'model')} on both sides"
                + (f"; {len(self.base_only)} on the base side only" if self.base_only else "")
                + (f"; {len(self.head_only)} on the head side only" if self.head_only else ""))


def plural(n: int, word: str) -> str:
    """`1 model`, `2 models`."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def model_key(model: str | None, config: dict) -> str:
    return (model or "(no model)") + (" [" + " ".join(f"{k}={v}" for k, v in sorted(config.items())) + "]" if config else "")


def run_query(con, name: str, **params) -> list[dict]:
    """A canned query as a list of dicts, on a raw connection or a Warehouse."""
    result = canned.run(getattr(con, "con", con), name, params)
    cols = [d[0] for d in result.description]
    return [dict(zip(cols, row, strict=True)) for row in result.fetchall()]


def select_runs(con, selector: Selector, model: str | None = None, pair_on: tuple[str, ...] | None = None) -> list[dict]:
    """The runs a selector picks, with their metrics and `workload` over the `pair_on` labels
    (None: the workload labels of views/12_workloads.sql)."""
    params = dict(selector.params)
    if model is not None:
        params["model"] = model
    if selector.labels:
        params["labels"] = orjson.dumps(selector.labels).decode()
    if pair_on is not None and set(pair_on) != set(workload_labels(con)):
        params["pair_on"] = ",".join(pair_on)
    rows = run_query(con, "compare/runs", **params)
    for r in rows:
        r["labels"] = orjson.loads(r["labels"]) if r["labels"] else {}
    return rows


def workload_labels(con) -> tuple[str, ...]:
    """The labels that name a workload (views/12_workloads.sql's workload_labels())."""
    con = getattr(con, "con", con)
    return tuple(r[0] for r in con.execute("SELECT unnest(workload_labels())").fetchall())


def compare(con, base: str, head: str, model: str | None = None,
            rules: dict[str, regress.Rule] | None = None, pair_on: tuple[str, ...] | None = None) -> CompareResult:
    """Compare the runs `base` selects with those `head` selects, workload by workload."""
    rules = rules or regress.DEFAULT_RULES
    sel_b, sel_h = parse_selector(base), parse_selector(head)
    groups_b, groups_h, common, _, holders = _paired_groups(con, sel_b, sel_h, model, pair_on)
    failures = _failures(con, [r for key in common for g in (groups_b, groups_h) for r in g[key]
                               if r.get("failures")])
    measured = _harness_numbers(con, [r for key in common for g in (groups_b, groups_h) for r in g[key]])
    pairs = [_pair(key, groups_b[key], groups_h[key], rules, failures) for key in common]
    result = CompareResult(
        base=base, head=head, pairs=pairs,
        base_only=sorted(_shown(groups_b[k]) for k in set(groups_b) - set(groups_h)),
        head_only=sorted(_shown(groups_h[k]) for k in set(groups_h) - set(groups_b)),
        summary=_summary(pairs),
    )
    if measured:
        result.hud = hud_summary(con, [r["run_id"] for k in common for r in groups_b[k]],
                                 [r["run_id"] for k in common for r in groups_h[k]], rules, sel_b.keys | sel_h.keys)
    configs = _configs(con, [groups[p.workload] for p in pairs for groups in (groups_b, groups_h)])
    result.warnings, result.notes = _warnings(pairs, groups_b, groups_h, sel_b, sel_h, configs)
    if holders:
        result.notes.append(f"left out: {plural(len(holders), 'run')} of benchmark-harness results alone, no compile "
                            f"({', '.join(sorted({r['model'] or '(no model)' for r in holders}))}); "
                            "`iwh query harness/hud_regression` compares their numbers")
    return result


def _harness_numbers(con, runs: list[dict]) -> int:
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
            vb, vh = b.get(metric), h.get(metric)
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


def _failures(con, runs: list[dict]) -> dict[str, list[Failure]]:
    """Run id -> its failures, for the runs that have any (compare/failures)."""
    out: dict[str, list[Failure]] = defaultdict(list)
    if not runs:
        return out
    for r in run_query(con, "compare/failures", runs=",".join(sorted({r["run_id"] for r in runs}))):
        frame = (r["user_file"].rsplit("/", 1)[-1] + (f":{r['user_line']}" if r["user_line"] is not None else "")
                 if r["user_file"] else None)
        out[r["run_id"]].append(Failure(r["run_id"], r["compile_id"], r["cause"], r["reason"],
                                        bool(r["fallback"]), frame))
    return out


def _configs(con, groups: list[list[dict]]) -> dict[str, dict]:
    """Config hash -> the parsed Inductor config, for the first run of each group that recorded one
    (what config_diff reads): a few texts, however many runs the sides hold."""
    hashes = sorted({h for h in (_first_config(g) for g in groups) if h})
    rows = run_query(con, "compare/inductor_configs", hashes=",".join(hashes)) if hashes else []
    return {r["config_hash"]: orjson.loads(r["text"]) for r in rows}


def _first_config(runs: list[dict]) -> str | None:
    return next((r["inductor_config_hash"] for r in runs if r.get("inductor_config_hash")), None)


def _paired_groups(con, sel_b: Selector, sel_h: Selector, model: str | None, pair_on: tuple[str, ...] | None):
    """The runs each selector picks, grouped by workload: (base groups, head groups, the workloads on
    both sides, the labels the workloads are told apart by, the runs left out). A label both selectors
    name is the compared variable, not part of the workload; runs both picked by id pair by model.
    Runs of benchmark-harness results alone (compare/runs' harness_only) compiled nothing: they are
    left out, and a selector that picks only such runs is an error."""
    keys = tuple(pair_on) if pair_on is not None else workload_labels(con)
    if "run" in sel_b.params and "run" in sel_h.params:
        keys = ()
    both = set(sel_b.labels) & set(sel_h.labels) | ({"device"} & set(sel_b.params) & set(sel_h.params))
    keys = tuple(k for k in keys if k not in both)
    runs_b, runs_h = select_runs(con, sel_b, model, keys), select_runs(con, sel_h, model, keys)
    for sel, runs in ((sel_b, runs_b), (sel_h, runs_h)):
        if not runs:
            raise SelectorError(f"selector {sel.text!r} picks no runs" + (f" of model {model}" if model else "")
                                + "; " + _nearest_values(con, sel, model) + " (`iwh runs` lists every run)")
        if all(r["harness_only"] for r in runs):
            raise SelectorError(f"selector {sel.text!r} picks only runs of benchmark-harness results, which compiled "
                                f"nothing ({plural(len(runs), 'run')}); compare their numbers with "
                                "`iwh query harness/hud_regression -p base=... -p head=...`")
    holders = [r for r in runs_b + runs_h if r["harness_only"]]
    runs_b, runs_h = [r for r in runs_b if not r["harness_only"]], [r for r in runs_h if not r["harness_only"]]
    dims = _shown_labels(runs_b + runs_h, keys)
    groups_b, groups_h = _group(runs_b, dims), _group(runs_h, dims)
    common = sorted(set(groups_b) & set(groups_h), key=lambda w: _sort_key(groups_b[w]))
    return groups_b, groups_h, common, dims, holders


def _nearest_values(con, sel: Selector, model: str | None) -> str:
    """Why a selector picks nothing, in the values that do exist: for each part that matches no run
    on its own, the existing values nearest to it; when every part matches alone, that only their
    combination is empty."""
    by_key = defaultdict(list)
    for r in run_query(con, "compare/selector_values"):
        by_key[r["key"]].append(r["value"])
    parts = [(k, v) for k, v in sel.params.items() if k != "run"] + list(sel.labels.items())
    if model is not None:
        parts.append(("model", model))
    hints = []
    for key, value in parts:
        one = Selector(f"{key}={value}", {key: value} if key in COLUMN_KEYS.values() else {},
                       {} if key in COLUMN_KEYS.values() else {key: value})
        if select_runs(con, one):
            continue
        known = by_key.get(key, [])
        if not known:
            hints.append(f"no run has a {key!r}" + (" label" if key not in COLUMN_KEYS.values() else ""))
        else:
            near = _nearest_versions(value, known) if key == "compiler" else \
                difflib.get_close_matches(value, known, n=5, cutoff=0.0)
            hints.append(f"no run has {key}={value}; nearest: {', '.join(near)}")
    if "run" in sel.params and not select_runs(con, Selector(sel.text, {"run": sel.params["run"]}, {})):
        hints.append(f"no run id starts with {sel.params['run']!r}")
    if not hints:
        hints.append("each part matches runs on its own, but no run matches all of them")
    return "; ".join(hints)


def _nearest_versions(wanted: str, known: list[str], n: int = 5) -> list[str]:
    """Versions nearest a wanted one: most leading parts in common, then the closest next part."""
    def parts(v: str) -> list[int]:
        return [int(x) for x in re.findall(r"\d+", v.split("+")[0])[:3]]

    want = parts(wanted)

    def distance(v: str) -> tuple:
        have = parts(v)
        common = next((i for i, (a, b) in enumerate(zip(want, have, strict=False)) if a != b), min(len(want), len(have)))
        gap = abs(want[common] - have[common]) if common < min(len(want), len(have)) else 0
        return (-common, gap, v)

    return sorted(known, key=distance)[:n]


def _label(run: dict, key: str):
    """A workload part of a run: device and rank are its columns (a label where the column is NULL),
    as workload_key (views/12_workloads.sql) reads them."""
    value = run.get(key) if key in ("device", "rank") else None
    if value is None:
        value = run["labels"].get(key)
    return None if value is None else str(value)


def _shown_labels(runs: list[dict], keys: tuple[str, ...]) -> dict[str, list[str]]:
    """Model -> the workload labels that tell its workloads apart: those with more than one value
    (a missing label is a value) among its runs. Workloads are shown with these only."""
    seen = defaultdict(set)
    for r in runs:
        for k in keys:
            seen[(r["model"], k)].add(_label(r, k))
    out = defaultdict(list)
    for (m, k), values in sorted(seen.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        if len(values) > 1:
            out[m].append(k)
    return out


def _group(runs: list[dict], dims: dict[str, list[str]]) -> dict[str, list[dict]]:
    """Workload key -> its runs, each with `config`: its labels that tell it apart from the model's others."""
    out = defaultdict(list)
    for r in runs:
        r["config"] = {k: _label(r, k) for k in dims.get(r["model"], ()) if _label(r, k) is not None}
        out[r["workload"]].append(r)
    return out


def _shown(runs: list[dict]) -> str:
    return model_key(runs[0]["model"], runs[0]["config"])


def _sort_key(runs: list[dict]) -> tuple:
    return (runs[0]["model"] or "", sorted(runs[0]["config"].items()))


def _values(runs: list[dict], metric: str) -> list:
    if metric == "accuracy":
        return [str(r[metric]) for r in runs if r.get(metric) is not None]
    return [float(r[metric]) for r in runs if r.get(metric) is not None]


def _shown_value(rule: regress.Rule, values: list):
    """The value a side shows: its status (a text), the best of a measurement, else the lower median."""
    if not values:
        return None
    if rule.status:
        return regress.status(values)
    return regress.best(rule, values) if rule.timing else regress.representative(values)


def _pair(workload: str, base: list[dict], head: list[dict], rules, failures: dict[str, list[Failure]]) -> ModelPair:
    metrics = {}
    temperatures = (_temperatures(base), _temperatures(head))
    for m in METRICS:
        vb, vh = _values(base, m), _values(head, m)
        verdict, how = regress.judge(rules[m], vb, vh)
        if m in ("compile_s", "compilation_latency") and vb and vh and temperatures[0] != temperatures[1]:
            # a warm cache loads what a cold one compiles: a difference of caches, not of compilers
            verdict, how = regress.NOT_COMPARABLE, f"caches {'/'.join(temperatures[0])} vs {'/'.join(temperatures[1])}"
        metrics[m] = MetricDelta(m, _shown_value(rules[m], vb), _shown_value(rules[m], vh), verdict, how)
    # a failure of a cause the base never had is new, whatever the counts say
    found = [[f for r in side for f in failures.get(r["run_id"], ())] for side in (base, head)]
    causes = [{f.cause for f in side} for side in found]
    new = [f for f in found[1] if f.cause not in causes[0]]
    fixed = [f for f in found[0] if f.cause not in causes[1]]
    judged = metrics["failures"]
    if new and rules["failures"].threshold is not None and judged.verdict != regress.REGRESSION:
        judged.verdict, judged.how = regress.REGRESSION, f"new: {new[0].cause}"
    return ModelPair(base[0]["model"], dict(base[0]["config"]), [r["run_id"] for r in base],
                     [r["run_id"] for r in head], metrics, workload, new, fixed)


def _temperatures(runs: list[dict]) -> tuple[str, ...]:
    """How a side's runs met the caches: "compiled" (caches off, or cold: every graph compiled),
    "warm" (every lookup hit), "partial". Compile times compare only between sides of the same."""
    kinds = {"off": "compiled", "cold": "compiled", None: "compiled"}
    return tuple(sorted({kinds.get(r.get("cache_temperature"), r.get("cache_temperature")) for r in runs}))


def _summary(pairs: list[ModelPair]) -> list[SummaryRow]:
    rows = []
    for m in METRICS:
        deltas = [p.metrics[m] for p in pairs if p.metrics[m].base is not None and p.metrics[m].head is not None]
        ratios = [d.head / d.base for d in deltas if d.delta is not None and d.base > 0 and d.head > 0]
        rows.append(SummaryRow(
            metric=m, models=len(deltas),
            base_total=sum(d.base for d in deltas) if deltas and m not in UNSUMMED else None,
            head_total=sum(d.head for d in deltas) if deltas and m not in UNSUMMED else None,
            geomean_ratio=math.exp(sum(math.log(x) for x in ratios) / len(ratios)) if ratios else None,
            regressions=sum(d.verdict == regress.REGRESSION for d in deltas),
            improvements=sum(d.verdict == regress.IMPROVEMENT for d in deltas),
        ))
    return rows


def _warnings(pairs, groups_b, groups_h, sel_b: Selector, sel_h: Selector,
              configs: dict[str, dict]) -> tuple[list[str], list[str]]:
    """(warnings, notes): warnings where the sides differ in more than the compared variable; notes
    for what a release difference explains (config keys that exist on one side only)."""
    warnings, notes = [], []
    if not pairs:
        warnings.append("no model is present on both sides: nothing to compare")
    compared = sel_b.keys | sel_h.keys
    # a compiler build carries its CUDA and Triton versions with it
    expected = {"compiler_version", "cuda_version", "triton_version"} if "compiler" in compared else set()
    for col in ENV_COLUMNS:
        if col in expected or (col in ("device", "backend") and col in compared):
            continue
        differing = [p.key for p in pairs
                     if {r.get(col) for r in groups_b[p.workload]} != {r.get(col) for r in groups_h[p.workload]}]
        if differing:
            warnings.append(f"{col} differs between the sides for {len(differing)} of {len(pairs)} models "
                            f"(e.g. {differing[0]}): the comparison mixes more than the selected variable")
    uncomparable = [p.key for p in pairs if p.metrics["compile_s"].verdict == regress.NOT_COMPARABLE]
    if uncomparable:
        warnings.append(f"compile time is not gated for {len(uncomparable)} of {len(pairs)} models (e.g. "
                        f"{uncomparable[0]}: {pairs[[p.key for p in pairs].index(uncomparable[0])].metrics['compile_s'].how}):"
                        " one side compiled with a cold cache and the other loaded from a warm one, so their "
                        "compile times measure caches, not compilers; compare cold runs with cold runs")
    changed, added, removed = Counter(), Counter(), Counter()
    for p in pairs:
        diff = config_diff(groups_b[p.workload], groups_h[p.workload], configs)
        changed.update(diff.changed)
        added.update(diff.added)
        removed.update(diff.removed)
    if changed:
        if sel_b.labels or sel_h.labels:
            why = " (expected when the compared label is a config variant)"
        elif "compiler" in compared:
            why = " (a release may change a default; check the runs did not set these)"
        else:
            why = ""
        warnings.append(f"inductor config differs between the sides in {len(changed)} keys{why}: {_names(changed)}")
    for counter, how in ((added, "new in the head side's release"), (removed, "removed in the head side's release")):
        if counter:
            notes.append(f"inductor config: {len(counter)} keys {how} (not a difference in settings): "
                         f"{_names(counter)}")
    return warnings, notes


def _names(keys: Counter, n: int = 8) -> str:
    return ", ".join(k for k, _ in keys.most_common(n)) + (" ..." if len(keys) > n else "")


@dataclass(frozen=True)
class ConfigDiff:
    changed: frozenset[str]  # keys on both sides whose values differ
    added: frozenset[str]    # keys the head's config has and the base's lacks
    removed: frozenset[str]


# A value naming a file or folder (a package's data dir, the working directory) differs by where the
# run or its virtualenv lay, not by setting: its last part is what was chosen.
_ABSOLUTE_PATH = re.compile(r"^/(?:[^/]+/)*")


def config_diff(base: list[dict], head: list[dict], configs: dict[str, dict]) -> ConfigDiff:
    """The Inductor config of the first run of each side that recorded one, key by key.
    `configs`: config hash -> parsed config (`_configs`)."""
    b, h = configs.get(_first_config(base) or ""), configs.get(_first_config(head) or "")
    if b is None or h is None:
        return ConfigDiff(frozenset(), frozenset(), frozenset())
    return ConfigDiff(
        changed=frozenset(k for k in b.keys() & h.keys() if _setting(b[k]) != _setting(h[k])),
        added=frozenset(h.keys() - b.keys()),
        removed=frozenset(b.keys() - h.keys()),
    )


def _setting(value):
    return _ABSOLUTE_PATH.sub(".../", value) if isinstance(value, str) else value


# ---- kernel-level diff ---------------------------------------------------------------------------

# unchanged: same name, same code; changed: same name, other code; renamed: the same kernel under
# another name (same code, or the same fusion by structure: its code may differ too); added, removed
ADDED, REMOVED, CHANGED, RENAMED, SAME = "added", "removed", "changed", "renamed", "unchanged"
STATUSES = (CHANGED, RENAMED, ADDED, REMOVED, SAME)


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

    @property
    def code_changed(self) -> bool:
        return self.base_hash is not None and self.head_hash is not None and self.base_hash != self.head_hash


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

    def counts(self, generated_only: bool = True) -> dict[str, int]:
        c = Counter(k.status for k in self.kernels if k.generated or not generated_only)
        return {s: c.get(s, 0) for s in STATUSES}

    @property
    def code_changes(self) -> list[int]:
        """Positions in `kernels` of the pairs whose code differs (changed, or renamed with new code)."""
        return [i for i, k in enumerate(self.kernels) if k.code_changed and k.status in (CHANGED, RENAMED)]


def kernel_diff(con, base: str, head: str, model: str, pair_on: tuple[str, ...] | None = None,
                workload: str | None = None) -> KernelDiff:
    """Kernels of `model` matched across the sides by name and normalised source hash, then by
    structure (`match_kernels`).

    Base and head selectors are as for `compare`; runs pair by workload as there. `workload` (a key
    as `compare` gives it, ModelPair.workload) picks the workload to diff; else the first of the
    model's (the notes list the others). When a side has several runs of it, the earliest (pass run
    ids to choose)."""
    groups_b, groups_h, common, dims, _ = _paired_groups(con, parse_selector(base), parse_selector(head), model,
                                                         pair_on)
    if not common:
        shown = dims.get(model, [])
        hint = f"; narrow the selectors, e.g. add {shown[0]}=..." if shown else ""
        raise SelectorError(f"no workload of {model} is on both sides (its runs differ in "
                            f"{', '.join(shown) or 'nothing the workload labels say'}){hint}")
    if workload is not None and workload not in common:
        raise SelectorError(f"workload {workload!r} is not on both sides; those that are: {', '.join(common)}")
    key = workload or common[0]
    b, h = groups_b[key][0]["run_id"], groups_h[key][0]["run_id"]
    notes = []
    if len(common) > 1 and workload is None:
        notes.append(f"{len(common)} workloads of {model} on both sides; diffing {_shown(groups_b[key])}, "
                     f"also: {', '.join(_shown(groups_b[k]) for k in common if k != key)} (narrow the selectors)")
    if len(groups_b[key]) > 1 or len(groups_h[key]) > 1:
        notes.append(f"{len(groups_b[key])} base and {len(groups_h[key])} head runs of {_shown(groups_b[key])}: "
                     f"diffing {b} and {h} (give run ids to choose)")
    kb, kh = run_query(con, "compare/kernels", run=b), run_query(con, "compare/kernels", run=h)
    fusions, fusion_notes = _fusion_changes(run_query(con, "compare/fusions", run=b),
                                            run_query(con, "compare/fusions", run=h))
    autotune = _autotune_changes(run_query(con, "compare/autotune", run=b), run_query(con, "compare/autotune", run=h))
    triton = [TritonConfigChange(**{k: r[k] for k in TritonConfigChange.__dataclass_fields__})
              for r in run_query(con, "triton/config_changes", steps=f"{b}>{h}")]
    return KernelDiff(model, b, h, match_kernels(kb, kh), fusions, notes + fusion_notes, autotune, triton)


def _autotune_changes(base: list[dict], head: list[dict]) -> list[AutotuneChange]:
    """Winners matched by what was tuned (op, shapes, strides, dtypes; the nth such op). A winner
    changed when another choice won, or the same template with another config; choices are compared
    without their per-graph counter (triton_mm_12 and triton_mm_3 are one template)."""
    def keyed(rows):
        seen, out = Counter(), {}
        for r in rows:
            k = (r["op"], r["shapes"], r["strides"], r["dtypes"])
            seen[k] += 1
            out[(*k, seen[k])] = r
        return out

    kb, kh = keyed(base), keyed(head)
    out = []
    for k in sorted(set(kb) | set(kh), key=lambda k: tuple(str(x) for x in k)):
        b, h = kb.get(k), kh.get(k)
        if b is None or h is None:
            status = ADDED if b is None else REMOVED
        elif (kernel_signature(b["choice"] or ""), b["config"]) == (kernel_signature(h["choice"] or ""), h["config"]):
            status = SAME
        else:
            status = CHANGED
        out.append(AutotuneChange(status, k[0], k[1], k[3], b and b["choice"], b and b["config"], b and b["time_ms"],
                                  h and h["choice"], h and h["config"], h and h["time_ms"]))
    order = {CHANGED: 0, ADDED: 1, REMOVED: 2, SAME: 3}
    return sorted(out, key=lambda c: order[c.status])


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


def _structure(a: dict, b: dict) -> tuple[float, str]:
    """How alike two kernels are (Jaccard similarity, by what): the best agreement of any description
    both have: the source nodes their lineage links them to, the source nodes or ATen ops their code
    names, the scheduler nodes their fusion groups hold (in graphs of as many nodes: node names number
    a graph's nodes), the op words of their fused names. Releases describe kernels differently (2.6's
    C++ kernels have neither lineage nor op words in `cpp_fused_0`), so no one description decides."""
    best = (0.0, "")
    described = [(a.get(c) or (), b.get(c) or (), what) for c, what in (
        ("lineage_nodes", "lineage"), ("source_nodes", "source nodes"), ("aten_ops", "ATen ops"),
        ("scheduler_nodes", "scheduler nodes"))]
    described.append((_op_words(a["signature"] or ""), _op_words(b["signature"] or ""), "op words"))
    for x, y, what in described:
        x, y = set(x), set(y)
        if what == "scheduler nodes" and not {n.partition(":")[0] for n in x} & {n.partition(":")[0] for n in y}:
            continue
        if x and y and len(x & y) / len(x | y) > best[0]:
            best = (len(x & y) / len(x | y), what)
    return best


def _counter(name: str | None) -> int:
    m = re.search(r"_(\d+)$", name or "")
    return int(m.group(1)) if m else 0


def match_kernels(base: list[dict], head: list[dict]) -> list[KernelChange]:
    """Kernels of two runs paired, most certain first: the same name and code (unchanged); the same
    code under another name (renamed); the same name (changed code); then, among the generated
    kernels of a phase still unpaired, the most alike by structure (`_structure`, at least
    STRUCTURE_MIN: renamed, its code compared too). What stays unpaired is added or removed.
    Names compare without their per-graph counter (signature)."""
    left, right = list(base), list(head)
    out: list[KernelChange] = []

    def sig(k):
        return k["signature"] or k["kernel_name"]

    def pair(test, how):
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
        def phase_ok(kb, kh, same_phase=same_phase):
            return not same_phase or kb["phase"] == kh["phase"]
        pair(lambda kb, kh: phase_ok(kb, kh) and sig(kb) == sig(kh) and kb["source_hash"] == kh["source_hash"], "name")
        pair(lambda kb, kh: phase_ok(kb, kh) and kb["source_hash"] is not None
             and kb["source_hash"] == kh["source_hash"] and kb["generated"] == kh["generated"], "source hash")
        pair(lambda kb, kh: phase_ok(kb, kh) and sig(kb) == sig(kh), "name")
    candidates = []
    for kb in left:
        for kh in right:
            if kb["generated"] and kh["generated"] and kb["phase"] == kh["phase"]:
                score, what = _structure(kb, kh)
                if score >= STRUCTURE_MIN:
                    candidates.append((-score, kb["category"] != kh["category"],
                                       abs(_counter(kb["kernel_name"]) - _counter(kh["kernel_name"])),
                                       id(kb), id(kh), kb, kh, f"structure: {what} {score:.2f}"))
    for *_, kb, kh, how in sorted(candidates, key=lambda c: c[:3]):
        if any(kb is k for k in left) and any(kh is k for k in right):
            out.append(_change(RENAMED, kb, kh, how))
            left.remove(kb)
            right.remove(kh)
    out += [_change(REMOVED, kb, None, "") for kb in left]
    out += [_change(ADDED, None, kh, "") for kh in right]
    order = {s: i for i, s in enumerate(STATUSES)}
    return sorted(out, key=lambda c: (order[c.status], not c.generated, c.phase or "", c.signature,
                                      c.base_kernel or "", c.head_kernel or ""))


def _change(status: str, kb: dict | None, kh: dict | None, how: str) -> KernelChange:
    ref = kh or kb
    return KernelChange(
        status=status, signature=ref["signature"] or ref["kernel_name"], generated=bool(ref["generated"]),
        category=ref["category"], phase=ref["phase"], base_kernel=kb["kernel_name"] if kb else None,
        head_kernel=kh["kernel_name"] if kh else None,
        base_hash=kb["source_hash"] if kb else None, head_hash=kh["source_hash"] if kh else None, how=how,
    )


def _fusion_changes(base: list[dict], head: list[dict]) -> tuple[list[FusionChange], list[str]]:
    """Split and merged fusion groups per graph (graphs paired by compile id and phase).

    Member names (op0, op1, ...) number the pre-fusion nodes, so they name the same node on both
    sides only when the pre-fusion graphs have the same length; other graphs are noted, not diffed."""
    graphs_b, graphs_h = _by_graph(base), _by_graph(head)
    changes, notes = [], []
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


def _by_graph(rows: list[dict]) -> dict[tuple, list[dict]]:
    out = defaultdict(list)
    for r in rows:
        out[(r["compile_id"] or r["graph_id"], r["phase"])].append(r)
    return out


def kernel_source(con, source_hash: str | None) -> str | None:
    if not source_hash:
        return None
    rows = run_query(con, "explore/kernel_source", source_hash=source_hash)
    return rows[0]["source"] if rows else None


def change_label(change: KernelChange) -> str:
    """How a changed kernel is named to people: its phase and the kernel on each side."""
    return f"{change.phase or '-'}: {change.base_kernel} -> {change.head_kernel}"


def code_diff(con, change: KernelChange) -> str:
    """Unified diff of a changed kernel's normalised source, base to head."""
    a = kernel_source(con, change.base_hash) or ""
    b = kernel_source(con, change.head_hash) or ""
    return "".join(difflib.unified_diff(
        a.splitlines(keepends=True), b.splitlines(keepends=True),
        fromfile=f"base/{change.base_kernel}", tofile=f"head/{change.head_kernel}",
    ))
