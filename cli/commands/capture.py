"""`iwh capture`: run a command with every artifact on, record what ran, ingest the result."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click

from inductor_warehouse.cli.options import data_path_option, db_option, location, wait
from inductor_warehouse.ingest.capture_command import CORE_KEYS, PROFILE, FolderTaken, capture, model_from_command, new_folder


def parse_labels(pairs: tuple[str, ...]) -> dict[str, str]:
    labels = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not key=value", param_hint="--label")
        if key in CORE_KEYS:
            raise click.BadParameter(f"{key!r} is recorded by capture itself", param_hint="--label")
        labels[key] = value
    return labels


def _default_out(model: str | None, cmd: tuple[str, ...]) -> Path:
    """A folder of its own, made now: `captures/<model>-<time>`, with `-2`, `-3`... when taken."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return new_folder(Path("captures") / f"{model or model_from_command(list(cmd))}-{stamp}")


@click.command(
    "capture",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
    epilog="\b\nExamples:\n  iwh capture --model mlp --label mode=train -- python train.py --steps 3\n"
           "  iwh capture --profile --db team.duckdb -- python train.py\n"
           "  iwh capture --cache on --cache-dir /tmp/ic --label cache=cold -- python train.py   # then again: warm",
)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for the artifacts, new or empty [default: captures/<model>-<time>, "
                   "with -2, -3... when that is taken].")
@click.option("--model", help="Model name for the run [default: the script's name].")
@click.option("--label", "label_pairs", multiple=True, metavar="KEY=VALUE",
              help="Extra run label (mode, dtype, variant, device, ...); repeatable.")
@click.option("--no-ingest", is_flag=True, help="Only capture; ingest later with `iwh ingest DIR`.")
@click.option("--profile", is_flag=True,
              help="Set IWH_PROFILE=<out>/profile.json for the command. The script records one "
                   "steady-state step there, e.g. `with torch.profiler.profile() as p: step()` then "
                   "`p.export_chrome_trace(os.environ['IWH_PROFILE'])`; see zoo/README.md.")
@click.option("--timeout", "timeout_s", type=float, help="Kill the command after this many seconds.")
@click.option("--cache", type=click.Choice(("off", "on")), default="off", show_default=True,
              help="off: every graph compiled afresh (all artifacts written); on: Inductor's FX graph, "
                   "AOTAutograd and autotune caches work as in production, in --cache-dir.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path),
              help="With --cache on: the cache folder; share it between runs to capture a warm compile "
                   "[default: captures/.inductor-cache].")
@db_option
@data_path_option
@click.argument("cmd", nargs=-1, required=True, type=click.UNPROCESSED)
@click.pass_context
def capture_command(ctx, out, model, label_pairs, no_ingest, profile, timeout_s, cache, cache_dir, cmd):
    """Run CMD with TorchInductor debug artifacts on, write manifest.json, and ingest the result.

    The command's exit code becomes iwh's: a failing run is still captured and ingested.
    """
    labels = parse_labels(label_pairs)
    out = out or _default_out(model, cmd)
    extra_env = {"IWH_PROFILE": str(Path(out).resolve() / PROFILE)} if profile else None
    if cache == "on":
        cache_dir = cache_dir or Path("captures") / ".inductor-cache"
        cache_dir.mkdir(parents=True, exist_ok=True)
    try:
        result = capture(list(cmd), out, model, labels, extra_env, timeout_s=timeout_s,
                         cache_dir=cache_dir if cache == "on" else None)
    except FolderTaken as exc:
        raise click.UsageError(str(exc)) from None
    status = "timed out" if result.timed_out else f"exit code {result.exit_code}"
    click.echo(f"captured {result.out} ({status}, {result.wall_s:.1f} s)", err=True)
    if not no_ingest:
        from inductor_warehouse.ingest.load import ingest_paths

        summary = ingest_paths([result.out], location(ctx), model=result.manifest["model"], labels=labels,
                               wait=wait(ctx))
        click.echo(summary.line(), err=True)
    ctx.exit(result.exit_code)
