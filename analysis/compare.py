"""`iwh compare`: two selections of runs, model by model, down to the kernels.

`compare` assembles the result from its parts, each a module: what the selectors pick
(`selectors`), the workloads they pair (`pairing`), each metric judged (`metrics`, by the rules of
`regress`), the harness's suite numbers (`hud`), the Inductor configs (`configs`); the kernel-level
diff is `kernel_diff`. They return plain dataclasses, which `render` turns into tables, CSV, JSON or
markdown; the command is `cli/commands/compare.py`, the SQL schema/queries/compare/.

Like for like: runs pair when their workloads agree (views/12_workloads.sql: the model plus the
workload labels mode, dtype, variant, batch and the device; `--pair-on` names others). A label a
selector names (`variant=default` vs `variant=aggressive_fusion`, `device=cpu` vs `device=cuda`) is
the compared variable, not part of the workload. Workloads on one side only are listed apart and
never enter the summary. Several runs of one workload on a side are samples.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from inductor_warehouse.analysis import regress
from inductor_warehouse.analysis.configs import config_diff, configs_of
from inductor_warehouse.analysis.hud import HudRow, harness_numbers, hud_summary
from inductor_warehouse.analysis.metrics import ModelPair, SummaryRow, failures_of, judge_pair, summary
from inductor_warehouse.analysis.pairing import paired_groups, shown
from inductor_warehouse.analysis.selectors import Selector, parse_selector
from inductor_warehouse.analysis.words import plural

# run columns that should agree between the sides unless the selectors compare them
ENV_COLUMNS = ("compiler_version", "device", "device_name", "backend", "triton_version", "cuda_version")


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


def compare(con, base: str, head: str, model: str | None = None,
            rules: dict[str, regress.Rule] | None = None, pair_on: tuple[str, ...] | None = None) -> CompareResult:
    """Compare the runs `base` selects with those `head` selects, workload by workload."""
    rules = rules or regress.DEFAULT_RULES
    sel_b, sel_h = parse_selector(base), parse_selector(head)
    groups_b, groups_h, common, _, holders = paired_groups(con, sel_b, sel_h, model, pair_on)
    failures = failures_of(con, [r for key in common for g in (groups_b, groups_h) for r in g[key]
                               if r.get("failures")])
    measured = harness_numbers(con, [r for key in common for g in (groups_b, groups_h) for r in g[key]])
    pairs = [judge_pair(key, groups_b[key], groups_h[key], rules, failures) for key in common]
    result = CompareResult(
        base=base, head=head, pairs=pairs,
        base_only=sorted(shown(groups_b[k]) for k in set(groups_b) - set(groups_h)),
        head_only=sorted(shown(groups_h[k]) for k in set(groups_h) - set(groups_b)),
        summary=summary(pairs),
    )
    if measured:
        result.hud = hud_summary(con, [r["run_id"] for k in common for r in groups_b[k]],
                                 [r["run_id"] for k in common for r in groups_h[k]], rules, sel_b.keys | sel_h.keys)
    configs = configs_of(con, [groups[p.workload] for p in pairs for groups in (groups_b, groups_h)])
    result.warnings, result.notes = _warnings(pairs, groups_b, groups_h, sel_b, sel_h, configs)
    if holders:
        result.notes.append(f"left out: {plural(len(holders), 'run')} of benchmark-harness results alone, no compile "
                            f"({', '.join(sorted({r['model'] or '(no model)' for r in holders}))}); "
                            "`iwh query harness/hud_regression` compares their numbers")
    return result


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
        warnings.append(f"inductor config differs between the sides in {plural(len(changed), 'key')}{why}: "
                        f"{_names(changed)}")
    for counter, how in ((added, "new in the head side's release"), (removed, "removed in the head side's release")):
        if counter:
            notes.append(f"inductor config: {plural(len(counter), 'key')} {how} (not a difference in settings): "
                         f"{_names(counter)}")
    return warnings, notes


def _names(keys: Counter, n: int = 8) -> str:
    """The n keys most workloads share, ties by name: the same text every run (a set's order is not)."""
    top = sorted(keys.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    return ", ".join(k for k, _ in top) + (" ..." if len(keys) > n else "")
