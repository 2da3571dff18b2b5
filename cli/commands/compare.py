"""`iwh compare`: two selections of runs, model by model, down to the kernels; a CI gate."""

from __future__ import annotations

import sys

import click

from inductor_warehouse.analysis import regress
from inductor_warehouse.analysis.changes import CHOICES, HARNESS, PHASE_RATIO, TOP
from inductor_warehouse.analysis.compare import compare
from inductor_warehouse.analysis.kernel_code import NORMALISED, KernelCodes
from inductor_warehouse.analysis.kernel_diff import change_code_diff, change_label, kernel_diff
from inductor_warehouse.analysis.selectors import SelectorError, same_selection
from inductor_warehouse.analysis.words import plural
from inductor_warehouse.cli.options import FORMATS, db_option, format_option, open_warehouse, timeout_option
from inductor_warehouse.store.bounds import QueryRefused

EXAMPLES = """\b
Examples:
  iwh compare --base compiler=2.13 --head compiler=2.14
  iwh compare --base variant=default --head variant=aggressive_fusion --format markdown
  iwh compare --base compiler=2.6.0 --head compiler=2.13.0 --model transformer --kernels --show-code
  iwh compare --base compiler=2.6.0 --head compiler=2.13.0 --model transformer --lineage gen_models.py:28
  iwh compare --base compiler=2.13 --head compiler=2.14 --fail-on regression --threshold kernels=2
  iwh compare --base compiler=2.13 --head compiler=2.14 --fail-on regression --threshold restarts=0
  iwh compare --base compiler=2.13 --head compiler=2.14 --model mobilenetv2_100 --threshold speedup=10%
  iwh compare --base variant=default --head variant=no_epilogue_fusion --model mlp   # two label values
  iwh compare --base ci=timm-cpu-2.13 --head ci=timm-cpu-2.14.1 --fail-on regression   # harness CSVs alone

\b
Exit status: 0 when nothing regressed (or without --fail-on), 1 when --fail-on regression finds a
regression (a workload's or HUD's suite numbers'), 2 on a usage or data error: the same selection on
both sides, a selector that picks no run, an unknown --threshold, a warehouse that cannot be read.
"""


class DataError(click.ClickException):
    """What the command was given cannot be compared: exit status 2, as a usage error's, never 1 (a
    regression's)."""
    exit_code = 2
PAIR_ON_HELP = ("labels that name a workload (device, rank: the run's): runs pair when the model and these agree "
                "[default: mode,dtype,variant,batch,device,rank,harness, the view run_workloads']")


@click.command("compare", epilog=EXAMPLES)
@click.option("--base", required=True, metavar="SEL", help="runs to compare from: compiler=V, k=v, run id (a,b: both)")
@click.option("--head", required=True, metavar="SEL", help="runs to compare to")
@click.option("--model", help="only this model")
@click.option("--kernels", "show_kernels", is_flag=True, help="kernel-level diff of --model")
@click.option("--show-code", is_flag=True, help="with --kernels or --lineage: unified diff of each changed kernel's own code, "
                   "normalised (kernel name, quoted paths, backend hash)")
@click.option("--show-meta", is_flag=True,
              help="with --show-code: also the kernels whose code differs only in metadata (inductor_meta, "
                   "triton_meta: 'meta changed')")
@click.option("--lineage", metavar="FILE:LINE",
              help="the kernels one model line became on both sides, paired as --kernels pairs them (FILE: any "
                   "part of its path)")
@click.option("--fail-on", type=click.Choice(("regression",)), help="exit 1 when a regression is found")
@click.option("--threshold", "thresholds", multiple=True, metavar="METRIC=N[%]|off",
              help="regression threshold, e.g. kernels=2, compile_s=5%, restarts=0 (gates restarts "
                   "too), recompiles=off; the benchmark harness's: speedup=5%, "
                   "compilation_latency=15%, compression_ratio=5% (HUD's), accuracy=off")
@click.option("--pair-on", metavar="K1,K2", help=PAIR_ON_HELP)
@timeout_option("the comparison")
@db_option
@format_option(FORMATS + ("markdown",))
@click.pass_context
def compare_command(ctx, base, head, model, show_kernels, show_code, show_meta, lineage, fail_on, thresholds, pair_on,
                    timeout, fmt):
    """Compare two sets of runs workload by workload (--base and --head selectors).

    Selectors: compiler=2.13 (every 2.13.x build; compiler=2.13.0+cpu for one build), a label such as
    variant=default, a run id (or prefix), device=, backend=, model=; join several with commas.
    Workloads on one side only are listed apart. Kernel counts, fusion, compile failures, fallbacks to
    eager and graph breaks are exact (a new failure is a regression); timings need several runs a side.
    Runs that PyTorch's benchmark harness measured also compare its accuracy (pass -> fail is a
    regression at once), speedup, compilation latency and compression ratio (HUD's thresholds), and
    each side's HUD suite numbers (pass rate, geomean speedup), which gate too; runs of harness CSVs
    alone (a CI job's, a nightly's) compare model by model on those numbers.
    """
    from inductor_warehouse.analysis import render

    if (show_kernels or show_code or lineage) and not model:
        raise click.UsageError(("--lineage" if lineage else "--kernels") + " needs --model M")
    if lineage:
        return _lineage(ctx, base, head, model, lineage, show_code, _keys(pair_on), timeout, fmt)
    try:
        rules = regress.parse_thresholds(thresholds)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--threshold") from e
    if same_selection(base, head):
        raise click.UsageError(f"--base and --head select the same runs ({base}): compare two releases, label "
                               "values or runs, e.g. --base compiler=2.13 --head compiler=2.14.1")
    keys = _keys(pair_on)
    try:
        opened = open_warehouse(ctx)
    except click.ClickException as e:
        raise DataError(e.message) from e
    def read(wh):
        result = compare(wh, base, head, model, rules, pair_on=keys)
        diff = kernel_diff(wh, base, head, model, pair_on=keys) if show_kernels or show_code else None
        # a list, not a dict by name: kernel names repeat across graphs (each graph counts from _0)
        shown = sorted(diff.code_changes + (diff.meta_changes if show_meta else [])) if diff and show_code else []
        texts = KernelCodes(wh)
        codes = [(change_label(diff.kernels[i]),  # type: ignore[union-attr]
                  change_code_diff(texts, diff.base_run, diff.head_run, diff.kernels[i])) for i in shown]  # type: ignore[union-attr]
        return result, diff, codes

    with opened as wh:
        try:
            result, diff, codes = wh.read(read, timeout)
        except (SelectorError, QueryRefused) as e:
            raise DataError(str(e)) from e
    click.echo(render.render(result, fmt, diff, codes), nl=False)
    from inductor_warehouse.schema.output import paragraph

    for w in result.warnings:
        click.echo(paragraph(f"warning: {w}", indent="  "), err=True)
    for n in result.notes:
        click.echo(paragraph(f"note: {n}", indent="  "), err=True)
    if fail_on == "regression" and result.regressions:
        click.echo(paragraph(f"{plural(len(result.regressions), 'regression')}: "
                             + ", ".join(f"{k} {m}" for k, m in result.regressions), indent="  "), err=True)
        sys.exit(1)


@click.command("changes", epilog="\b\nExamples:\n  iwh changes --model transformer\n"
                                 "  iwh changes --model mlp --series variant --metric kernels --format csv\n"
                                 "  iwh changes --model deit_tiny_patch16_224.fb_in1k --metric compile_phase --phase codegen\n"
                                 "  iwh changes --model mobilenetv2_100 --series variant --metric triton_config\n"
                                 "  iwh changes --model mobilenetv2_100 --metric harness")
@click.option("--model", required=True, help="the model whose runs form the series")
@click.option("--series", "series_label", metavar="LABEL",
              help="order the runs by this label's value (e.g. nightly) [default: by compiler version]")
@click.option("--metric", "metrics", multiple=True, type=click.Choice(CHOICES),
              help="only these (repeatable) [default: every structural metric, kernel identity, compile phase "
                   "times and Triton launch configs]")
@click.option("--phase", metavar="TEXT", help="compile_phase: only phases whose name contains TEXT (e.g. codegen)")
@click.option("--phase-ratio", type=float, default=PHASE_RATIO, show_default=True,
              help="compile_phase: the relative move of a phase's time that makes a change point (and half a "
                   "second; judged with more than one run a side)")
@click.option("--all", "show_all", is_flag=True, help=f"every change, not the {TOP} with the biggest effect")
@click.option("--pair-on", metavar="K1,K2", help=PAIR_ON_HELP.replace("runs pair when the model and these agree",
                                                                       "each workload is a series of its own"))
@timeout_option("the search for changes")
@db_option
@format_option(FORMATS + ("markdown",))
@click.pass_context
def changes_command(ctx, model, series_label, metrics, pair_on, phase, phase_ratio, show_all, timeout, fmt):
    """Where in a series of runs a model's kernels, fusion, failures, graph breaks, compile phases or
    Triton launch configs changed, and how.

    Each change point is the first run whose metric or generated kernels differ from the run before
    it in the series; a compile phase (every dynamo_timed span of the trace) whose time moved by
    --phase-ratio between one point (release, or label value) and the next, judged with more than
    one run a side (a phase that moved with its parent folded under it); a Triton kernel whose
    warps, stages or shared memory differ from the run before. Biggest effect first: failures and
    fallbacks, graph breaks and recompiles, kernels, fusion, launch configs, phase times; the top
    ones unless --all. `iwh compare --base BEFORE --head AFTER --model M --kernels --show-code`
    shows the code of the kernels that changed.
    """
    from inductor_warehouse.analysis.changes import changes
    from inductor_warehouse.analysis.render import changes_frame
    from inductor_warehouse.schema.output import emit

    keys = _keys(pair_on)
    with open_warehouse(ctx) as wh:
        try:
            report = wh.read(lambda wh: changes(wh.con, model, series_label, tuple(metrics) or CHOICES, keys, phase,
                                                phase_ratio), timeout)
        except QueryRefused as e:
            raise click.ClickException(str(e)) from e
    if not report.series and not report.points and not report.harness:
        raise click.ClickException(f"no run of model {model!r}" + (f" with a {series_label!r} label" if series_label else "")
                                   + "; `iwh runs` lists the runs")
    ranked = report.ranked()
    shown = None if show_all else TOP
    emit(changes_frame(report, shown, table=fmt in ("table", "markdown")), fmt)
    if fmt == "table":
        # the harness's series are its workloads' points, whose runs may have compiled nothing
        series = set(report.series) | set(report.harness)
        runs = sum(len(rs) for rs in report.series.values())
        held = sum(report.harness.values())
        click.echo(f"{plural(len(report.points), 'change point')} in {plural(len(series), 'series', 'series')}"
                   + " of " + " and ".join([plural(runs, "run")] * bool(runs or not held)
                                            + [f"{plural(held, 'point')} of harness results"] * bool(held))
                   + f", ordered by {report.ordered_by}"
                   + ("; the biggest changes first" if report.points else ": no change"), err=True)
        for n in report.notes:
            click.echo(f"note: {n}", err=True)
        if shown is not None and len(ranked) > shown:
            click.echo(f"{plural(len(ranked) - shown, 'more change')}: --all", err=True)
        # the code of a change of the compiles' own (a harness number's runs may hold CSVs alone)
        p = next((p for p, c in ranked if c.metric != HARNESS), None)
        if p is not None:
            click.echo(f"the code of one: iwh compare --base {p.before_run} --head {p.after_run} --model {model} "
                       "--kernels --show-code", err=True)
            if p.compare_url:
                click.echo(f"its torch commits: {p.compare_url}", err=True)


def _lineage(ctx, base, head, model, where, show_code, keys, timeout, fmt) -> None:
    """`--lineage FILE:LINE`: the line's kernels on both sides, paired, then the code of those that changed."""
    from inductor_warehouse.analysis.line_diff import line_code_diffs, line_diff, line_frame, parse_location
    from inductor_warehouse.schema.output import emit

    try:
        file, line = parse_location(where)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--lineage") from e
    def read(wh):
        result = line_diff(wh, base, head, model, file, line, pair_on=keys)
        return result, line_code_diffs(wh, result) if show_code else []

    with open_warehouse(ctx) as wh:
        try:
            result, codes = wh.read(read, timeout)
        except (SelectorError, QueryRefused) as e:
            raise DataError(str(e)) from e
    if fmt in ("table", "markdown"):
        click.echo(f"{file}:{line} of {model}: base run {result.base_run} -> head run {result.head_run}"
                   + (f"\n    {result.code}" if result.code else ""))
    emit(line_frame(result), fmt)
    if codes:
        click.echo(f"\ncode diffs: each side's own code as its run wrote it, {NORMALISED}")
    for label, text in codes:
        click.echo(f"\n--- {label}\n{text or '(identical after normalisation)'}")
    for n in result.notes:
        click.echo(f"note: {n}", err=True)


def _keys(pair_on: str | None) -> tuple[str, ...] | None:
    return None if pair_on is None else tuple(k.strip() for k in pair_on.split(",") if k.strip())
