"""`iwh compare`: two selections of runs, model by model, down to the kernels.

Computing lives here and returns plain dataclasses (the dashboard calls `compare` and
`kernel_diff`); `analysis/render.py` turns them into tables, CSV, JSON or markdown; the rules
that call a change a regression are in `analysis/regress.py`; the command is
`cli/commands/compare.py`. The SQL is in schema/queries/compare/.

Like for like: runs pair on the model plus those workload labels (`PAIR_ON`, or `--pair-on`: mode,
dtype, variant, batch, device) that tell runs of one side apart. A label constant on each side but
different between them (`variant=default` vs `variant=aggressive_fusion`) is the compared
variable, not a pairing key. Models on one side only are listed apart
and never enter the summary. Several runs of one pairing key on a side are samples.
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import orjson

from analysis import regress
from ingest.normalize import kernel_signature
from schema import queries as canned

STRUCTURAL = ("kernels", "extern_kernels", "pre_fusion_nodes", "post_fusion_nodes", "fusion_rate",
              "graph_breaks", "recompiles", "library_graph_breaks", "library_recompiles", "fx_cache_hit_rate")
TIMINGS = ("compile_s", "kernel_us")
METRICS = STRUCTURAL + TIMINGS
RATES = ("fusion_rate", "fx_cache_hit_rate")  # a sum of rates means nothing: the summary shows their geomean only
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
    base: float | None
    head: float | None
    verdict: str
    how: str = ""

    @property
    def delta(self) -> float | None:
        return None if self.base is None or self.head is None else self.head - self.base

    @property
    def pct(self) -> float | None:
        d = self.delta
        return None if d is None or not self.base else 100.0 * d / abs(self.base)


@dataclass
class ModelPair:
    model: str
    config: dict  # the pairing labels beyond the model
    base_runs: list[str]
    head_runs: list[str]
    metrics: dict[str, MetricDelta]

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
class CompareResult:
    base: str
    head: str
    pairs: list[ModelPair]
    base_only: list[str]
    head_only: list[str]
    summary: list[SummaryRow]
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what a release difference explains; not warnings

    @property
    def regressions(self) -> list[tuple[str, str]]:
        return [(p.key, m) for p in self.pairs for m in p.regressions]


def model_key(model: str | None, config: dict) -> str:
    return (model or "(no model)") + (" [" + " ".join(f"{k}={v}" for k, v in sorted(config.items())) + "]" if config else "")


def run_query(con, name: str, **params) -> list[dict]:
    """A canned query as a list of dicts, on a raw connection or a Warehouse."""
    con = getattr(con, "con", con)
    q = canned.get(name)
    rel = con.execute(q.sql, q.bind(params))
    cols = [d[0] for d in rel.description]
    return [dict(zip(cols, row, strict=True)) for row in rel.fetchall()]


def select_runs(con, selector: Selector, model: str | None = None) -> list[dict]:
    params = dict(selector.params)
    if model is not None:
        params["model"] = model
    if selector.labels:
        params["labels"] = orjson.dumps(selector.labels).decode()
    rows = run_query(con, "compare/runs", **params)
    for r in rows:
        r["labels"] = orjson.loads(r["labels"]) if r["labels"] else {}
    return rows


# Labels that describe the workload a run measured. Other labels (command lines, hosts, start
# times, commits) record how a run was made: they differ from run to run and must not split pairs.
PAIR_ON = ("mode", "dtype", "variant", "batch", "device")


def compare(con, base: str, head: str, model: str | None = None,
            rules: dict[str, regress.Rule] | None = None, pair_on: tuple[str, ...] = PAIR_ON) -> CompareResult:
    """Compare the runs `base` selects with those `head` selects, model by model."""
    rules = rules or regress.DEFAULT_RULES
    sel_b, sel_h = parse_selector(base), parse_selector(head)
    groups_b, groups_h, common, _ = _paired_groups(con, sel_b, sel_h, model, pair_on)
    pairs = [_pair(key, groups_b[key], groups_h[key], rules) for key in common]
    result = CompareResult(
        base=base, head=head, pairs=pairs,
        base_only=sorted(model_key(*_unkey(k)) for k in set(groups_b) - set(groups_h)),
        head_only=sorted(model_key(*_unkey(k)) for k in set(groups_h) - set(groups_b)),
        summary=_summary(pairs),
    )
    configs = _configs(con, [groups[_key(p)] for p in pairs for groups in (groups_b, groups_h)])
    result.warnings, result.notes = _warnings(pairs, groups_b, groups_h, sel_b, sel_h, configs)
    return result


def _configs(con, groups: list[list[dict]]) -> dict[str, dict]:
    """Config hash -> the parsed Inductor config, for the first run of each group that recorded one
    (what config_diff reads): a few texts, however many runs the sides hold."""
    hashes = sorted({h for h in (_first_config(g) for g in groups) if h})
    rows = run_query(con, "compare/inductor_configs", hashes=",".join(hashes)) if hashes else []
    return {r["config_hash"]: orjson.loads(r["text"]) for r in rows}


def _first_config(runs: list[dict]) -> str | None:
    return next((r["inductor_config_hash"] for r in runs if r.get("inductor_config_hash")), None)


def _paired_groups(con, sel_b: Selector, sel_h: Selector, model: str | None, pair_on: tuple[str, ...]):
    """The runs each selector picks, grouped like for like: (base groups, head groups, the keys on
    both sides, the pairing labels used)."""
    runs_b, runs_h = select_runs(con, sel_b, model), select_runs(con, sel_h, model)
    for sel, runs in ((sel_b, runs_b), (sel_h, runs_h)):
        if not runs:
            raise SelectorError(f"selector {sel.text!r} picks no runs" + (f" of model {model}" if model else "")
                                + "; " + _nearest_values(con, sel, model) + " (`iwh runs` lists every run)")
    dims = _pairing_labels(runs_b, runs_h, pair_on)
    groups_b, groups_h = _group(runs_b, dims), _group(runs_h, dims)
    return groups_b, groups_h, sorted(set(groups_b) & set(groups_h)), dims


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


def _pairing_labels(runs_b: list[dict], runs_h: list[dict], candidates: tuple[str, ...]) -> list[str]:
    """The workload labels that tell runs of one model apart within a side. A label one selector
    pins (mode=train) still pairs when the other side has several values of it."""
    keys = set()
    for r in runs_b + runs_h:
        keys |= {k for k, v in r["labels"].items() if k in candidates and v is not None}
    seen = defaultdict(set)  # (side, model, key) -> values
    for side, runs in ((0, runs_b), (1, runs_h)):
        for r in runs:
            for k in keys:
                seen[(side, r["model"], k)].add(r["labels"].get(k))
    return sorted({k for (_, _, k), values in seen.items() if len(values) > 1})


def _group(runs: list[dict], dims: list[str]) -> dict[tuple, list[dict]]:
    out = defaultdict(list)
    for r in runs:
        config = tuple((k, str(r["labels"][k])) for k in dims if r["labels"].get(k) is not None)
        out[(r["model"], config)].append(r)
    return out


def _values(runs: list[dict], metric: str) -> list[float]:
    return [float(r[metric]) for r in runs if r.get(metric) is not None]


def _pair(key: tuple, base: list[dict], head: list[dict], rules) -> ModelPair:
    metrics = {}
    temperatures = (_temperatures(base), _temperatures(head))
    for m in METRICS:
        vb, vh = _values(base, m), _values(head, m)
        verdict, how = regress.judge(rules[m], vb, vh)
        if m == "compile_s" and vb and vh and temperatures[0] != temperatures[1]:
            # a warm cache loads what a cold one compiles: a difference of caches, not of compilers
            verdict, how = regress.NOT_COMPARABLE, f"caches {'/'.join(temperatures[0])} vs {'/'.join(temperatures[1])}"
        pick = min if m in TIMINGS else regress.representative
        metrics[m] = MetricDelta(m, pick(vb) if vb else None, pick(vh) if vh else None, verdict, how)
    return ModelPair(key[0], dict(key[1]), [r["run_id"] for r in base], [r["run_id"] for r in head], metrics)


def _temperatures(runs: list[dict]) -> tuple[str, ...]:
    """How a side's runs met the caches: "compiled" (caches off, or cold: every graph compiled),
    "warm" (every lookup hit), "partial". Compile times compare only between sides of the same."""
    kinds = {"off": "compiled", "cold": "compiled", None: "compiled"}
    return tuple(sorted({kinds.get(r.get("cache_temperature"), r.get("cache_temperature")) for r in runs}))


def _summary(pairs: list[ModelPair]) -> list[SummaryRow]:
    rows = []
    for m in METRICS:
        deltas = [p.metrics[m] for p in pairs if p.metrics[m].base is not None and p.metrics[m].head is not None]
        ratios = [d.head / d.base for d in deltas if d.base > 0 and d.head > 0]
        rows.append(SummaryRow(
            metric=m, models=len(deltas),
            base_total=sum(d.base for d in deltas) if deltas and m not in RATES else None,
            head_total=sum(d.head for d in deltas) if deltas and m not in RATES else None,
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
                     if {r.get(col) for r in groups_b[_key(p)]} != {r.get(col) for r in groups_h[_key(p)]}]
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
        diff = config_diff(groups_b[_key(p)], groups_h[_key(p)], configs)
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


def _unkey(key: tuple) -> tuple[str, dict]:
    return key[0], dict(key[1])


def _key(p: ModelPair) -> tuple:
    return (p.model, tuple(p.config.items()))


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

ADDED, REMOVED, CHANGED, SAME = "added", "removed", "changed", "unchanged"


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
class KernelDiff:
    model: str
    base_run: str
    head_run: str
    kernels: list[KernelChange]
    fusions: list[FusionChange]
    notes: list[str] = field(default_factory=list)
    autotune: list[AutotuneChange] = field(default_factory=list)

    def counts(self, generated_only: bool = True) -> dict[str, int]:
        c = Counter(k.status for k in self.kernels if k.generated or not generated_only)
        return {s: c.get(s, 0) for s in (ADDED, REMOVED, CHANGED, SAME)}


def kernel_diff(con, base: str, head: str, model: str, pair_on: tuple[str, ...] = PAIR_ON) -> KernelDiff:
    """Kernels of `model` matched across the sides by signature, then normalised source hash.

    Base and head selectors are as for `compare`; runs pair like for like as there. When several
    configurations of the model pair, the first is diffed (the notes list the others); when a side
    has several runs of it, the earliest (pass run ids to choose)."""
    groups_b, groups_h, common, dims = _paired_groups(con, parse_selector(base), parse_selector(head), model,
                                                      pair_on)
    if not common:
        hint = f"; narrow the selectors, e.g. add {dims[0]}=..." if dims else ""
        raise SelectorError(f"no run of {model} pairs like for like across the sides (they differ in "
                            f"{', '.join(dims) or 'nothing the pairing labels say'}){hint}")
    key = common[0]
    b, h = groups_b[key][0]["run_id"], groups_h[key][0]["run_id"]
    notes = []
    if len(common) > 1:
        notes.append(f"{len(common)} configurations of {model} on both sides; diffing {model_key(*_unkey(key))}, "
                     f"also: {', '.join(model_key(*_unkey(k)) for k in common[1:])} (narrow the selectors)")
    if len(groups_b[key]) > 1 or len(groups_h[key]) > 1:
        notes.append(f"{len(groups_b[key])} base and {len(groups_h[key])} head runs of {model_key(*_unkey(key))}: "
                     f"diffing {b} and {h} (give run ids to choose)")
    kb, kh = run_query(con, "compare/kernels", run=b), run_query(con, "compare/kernels", run=h)
    fusions, fusion_notes = _fusion_changes(run_query(con, "compare/fusions", run=b),
                                            run_query(con, "compare/fusions", run=h))
    autotune = _autotune_changes(run_query(con, "compare/autotune", run=b), run_query(con, "compare/autotune", run=h))
    return KernelDiff(model, b, h, _match_kernels(kb, kh), fusions, notes + fusion_notes, autotune)


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


def _match_kernels(base: list[dict], head: list[dict]) -> list[KernelChange]:
    by_sig_b, by_sig_h = defaultdict(list), defaultdict(list)
    for k in base:
        by_sig_b[k["signature"] or k["kernel_name"]].append(k)
    for k in head:
        by_sig_h[k["signature"] or k["kernel_name"]].append(k)
    out = []
    for sig in sorted(set(by_sig_b) | set(by_sig_h)):
        left, right = list(by_sig_b.get(sig, ())), list(by_sig_h.get(sig, ()))
        # most specific match first: same source in the same phase, same source anywhere,
        # then same phase (a changed kernel), then whatever pairs are left
        for same_hash, same_phase in ((True, True), (True, False), (False, True), (False, False)):
            for kb in list(left):
                for kh in right:
                    if (same_hash and kb["source_hash"] != kh["source_hash"]) or \
                            (same_phase and kb["phase"] != kh["phase"]):
                        continue
                    status = SAME if kb["source_hash"] == kh["source_hash"] else CHANGED
                    out.append(_change(status, sig, kb, kh))
                    left.remove(kb)
                    right.remove(kh)
                    break
        out += [_change(REMOVED, sig, kb, None) for kb in left]
        out += [_change(ADDED, sig, None, kh) for kh in right]
    order = {CHANGED: 0, ADDED: 1, REMOVED: 2, SAME: 3}
    return sorted(out, key=lambda c: (order[c.status], not c.generated, c.phase or "", c.signature,
                                      c.base_kernel or "", c.head_kernel or ""))


def _change(status: str, sig: str, kb: dict | None, kh: dict | None) -> KernelChange:
    ref = kh or kb
    return KernelChange(
        status=status, signature=sig, generated=bool(ref["generated"]), category=ref["category"],
        phase=ref["phase"], base_kernel=kb["kernel_name"] if kb else None,
        head_kernel=kh["kernel_name"] if kh else None,
        base_hash=kb["source_hash"] if kb else None, head_hash=kh["source_hash"] if kh else None,
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
