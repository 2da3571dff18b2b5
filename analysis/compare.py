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
from inductor_warehouse.analysis.canned_rows import Reader
from inductor_warehouse.analysis.configs import Config, config_diff, configs_of
from inductor_warehouse.analysis.hud import HudRow, harness_numbers, harness_rows, harness_set_pairs, hud_summary
from inductor_warehouse.analysis.metrics import ModelPair, SummaryRow, failures_of, judge_pair, summary
from inductor_warehouse.analysis.pairing import Groups, paired_groups, workload_text
from inductor_warehouse.analysis.selectors import Selector, SelectorError, parse_selector
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
        """(workload, metric) of each regression: the workloads', then HUD's suite numbers' (a suite
        and what it ran in, HUD's rule)."""
        return [(p.key, m) for p in self.pairs for m in p.regressions] + [
            (f"{r.suite} [{r.group}]" if r.group else str(r.suite), r.metric)
            for r in self.hud if r.verdict == regress.REGRESSION]

    @property
    def models(self) -> int:
        return len({p.model for p in self.pairs})

    def headline(self) -> str:
        """`16 workloads of 6 models on both sides`, in words that agree with the numbers."""
        return (f"{plural(len(self.pairs), 'workload')} of {plural(self.models, 'model')} on both sides"
                + (f"; {len(self.base_only)} on the base side only" if self.base_only else "")
                + (f"; {len(self.head_only)} on the head side only" if self.head_only else ""))


def compare(con: Reader, base: str, head: str, model: str | None = None,
            rules: dict[str, regress.Rule] | None = None, pair_on: tuple[str, ...] | None = None) -> CompareResult:
    """Compare the runs `base` selects with those `head` selects, workload by workload; the
    benchmark harness's rows of runs that compiled nothing (a job's or a nightly's CSVs) pair as
    workloads of their own (analysis/hud.py)."""
    rules = rules or regress.DEFAULT_RULES
    sel_b, sel_h = parse_selector(base), parse_selector(head)
    groups_b, groups_h, common, _, holders = paired_groups(con, sel_b, sel_h, model, pair_on)
    compiled = [[r for key in common for r in groups[key]] for groups in (groups_b, groups_h)]
    sides = [[r["run_id"] for r in runs] + [r["run_id"] for r in held] for runs, held in zip(compiled, holders, strict=True)]
    rows = [harness_rows(con, ids) for ids in sides]
    failures = failures_of(con, [r for side in compiled for r in side if r.get("failures")])
    measured = harness_numbers(con, compiled[0] + compiled[1], rows[0] + rows[1])
    pairs = [judge_pair(key, groups_b[key], groups_h[key], rules, failures) for key in common]
    base_only = sorted(workload_text(groups_b[k]) for k in set(groups_b) - set(groups_h))
    head_only = sorted(workload_text(groups_h[k]) for k in set(groups_h) - set(groups_b))
    # the rows of runs of harness results alone that no compiled workload of their side measured
    free = [[row for row in side_rows if row["holder_run_id"] in {r["run_id"] for r in held}
             and row["linked_run_id"] not in {r["run_id"] for r in runs}]
            for side_rows, held, runs in zip(rows, holders, compiled, strict=True)]
    if model is not None:
        free = [[row for row in side if row["model"] == model] for side in free]
        for sel, runs, rows_of in ((sel_b, compiled[0], free[0]), (sel_h, compiled[1], free[1])):
            if not runs and not rows_of and not (groups_b if sel is sel_b else groups_h):
                raise SelectorError(f"selector {sel.text!r} picks no run of model {model} and no harness result "
                                    f"of it (`iwh runs` lists every run)")
    sets_b, sets_h = harness_set_pairs(free[0], free[1], sel_b.keys | sel_h.keys)
    for key in sorted(set(sets_b) & set(sets_h)):
        pairs.append(judge_pair(key, sets_b[key], sets_h[key], rules, {}))
    base_only += sorted(set(sets_b) - set(sets_h))
    head_only += sorted(set(sets_h) - set(sets_b))
    result = CompareResult(base=base, head=head, pairs=pairs, base_only=base_only, head_only=head_only,
                           summary=summary(pairs))
    if measured or (sets_b and sets_h):
        result.hud = hud_summary(con, sides[0], sides[1], rules, (rows[0], rows[1]), sel_b.keys | sel_h.keys, model)
    configs = configs_of(con, [groups[p.workload] for p in pairs if p.workload in common
                               for groups in (groups_b, groups_h)])
    result.warnings, result.notes = _warnings([p for p in pairs if p.workload in common], groups_b, groups_h,
                                              sel_b, sel_h, configs)
    # a run left out of every metric is said, with why, wherever its side is shown
    result.notes += [f"{p.key}: {n}" for p in pairs for n in p.unfinished]
    if not pairs:
        result.warnings.insert(0, "no model is present on both sides: nothing to compare")
    return result


def _warnings(pairs: list[ModelPair], groups_b: Groups, groups_h: Groups, sel_b: Selector, sel_h: Selector,
              configs: dict[str, Config]) -> tuple[list[str], list[str]]:
    """(warnings, notes): warnings where the sides differ in more than the compared variable; notes
    for what a release difference explains (config keys that exist on one side only)."""
    compared = sel_b.keys | sel_h.keys
    warnings, notes = _environment(pairs, groups_b, groups_h, compared)
    uncomparable = [p.key for p in pairs if p.metrics["compile_s"].verdict == regress.NOT_COMPARABLE]
    if uncomparable:
        warnings.append(f"compile time is not gated for {len(uncomparable)} of {len(pairs)} models (e.g. "
                        f"{uncomparable[0]}: {pairs[[p.key for p in pairs].index(uncomparable[0])].metrics['compile_s'].how}):"
                        " one side's runs compiled (caches off or cold) and the other's loaded graphs from a warm "
                        "cache, so their compile times measure caches, not compilers; compare cold runs with cold runs")
    changed: Counter[str] = Counter()
    added: Counter[str] = Counter()
    removed: Counter[str] = Counter()
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


def _environment(pairs: list[ModelPair], groups_b: Groups, groups_h: Groups,
                 compared: set[str]) -> tuple[list[str], list[str]]:
    """(warnings, notes) of the run columns (ENV_COLUMNS) the sides should agree on: a warning where both
    sides know values that differ, a note where a side knows none."""
    warnings: list[str] = []
    notes: list[str] = []
    # a compiler build carries its CUDA and Triton versions with it
    expected = {"compiler_version", "cuda_version", "triton_version"} if "compiler" in compared else set()
    for col in ENV_COLUMNS:
        if col in expected or (col in ("device", "backend") and col in compared):
            continue
        # a NULL is unknown (a warm run writes no fx_graph_runnable to read a CUDA version from): a
        # difference only where both sides know a value
        known = {p.key: ({r.get(col) for r in groups_b[p.workload]} - {None},
                         {r.get(col) for r in groups_h[p.workload]} - {None}) for p in pairs}
        differing = [key for key, (b, h) in known.items() if b and h and b != h]
        if differing:
            warnings.append(f"{col} differs between the sides for {len(differing)} of {len(pairs)} models "
                            f"(e.g. {differing[0]}): the comparison mixes more than the selected variable")
        for side, unknown in (("base", [key for key, (b, h) in known.items() if h and not b]),
                              ("head", [key for key, (b, h) in known.items() if b and not h])):
            if unknown:
                notes.append(f"{col} is unknown on the {side} side for {len(unknown)} of {len(pairs)} models "
                             f"(e.g. {unknown[0]}): not compared")
    return warnings, notes


def _names(keys: Counter[str], n: int = 8) -> str:
    """The n keys most workloads share, ties by name: the same text every run (a set's order is not)."""
    top = sorted(keys.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    return ", ".join(k for k, _ in top) + (" ..." if len(keys) > n else "")
