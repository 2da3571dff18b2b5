"""`iwh ingest` and `iwh migrate`: artifacts into the warehouse, and its schema brought up to date."""

from __future__ import annotations

import os

import click

from inductor_warehouse.cli.options import data_path_option, db_option, format_option, labels, location, wait
from inductor_warehouse.schema.words import plural
from inductor_warehouse.store.errors import WarehouseError

# what an ingest reads: said when a file is skipped as none of these, and when nothing was found
KINDS_READ = "trace log, debug tree, profiler trace, TORCH_LOGS output, harness CSV or spyre spec"
# why a file of each reason discovery gives was left unread, for a user who did not write the rules
WHY_SKIPPED = {
    "unrecognised file": f"not a {KINDS_READ}",
    "harness records with no CSV beside them": "a harness JSON record says nothing stored without its CSV",
}
COMPANION = "it belongs to a run, and its folder and the one above hold none, or several"
# the skipped files named for each reason, unless --verbose names them all
EXAMPLES = 3


@click.command(epilog="\b\nExamples:\n  iwh ingest runs/ --jobs 2\n  iwh ingest out/ --model resnet50 "
                      "--label variant=max_autotune --db team.duckdb\n"
                      "  iwh ingest s3://bucket/captures/2026-11 --executor ray --jobs 2   # AWS_* variables for S3\n"
                      "  iwh ingest s3://bucket/captures --executor ray --ray-address head.internal:6379")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--model", help="model name for runs without a manifest.json")
@click.option("--label", "label_pairs", multiple=True, metavar="K=V", help="label for runs (manifest keys win)")
@click.option("--jobs", "-j", type=int, default=1, show_default=True,
              help="parse runs in N processes (with --executor ray and no cluster: a local Ray of N CPUs)")
@click.option("--executor", default="local", show_default=True, metavar="local|ray|ray://HOST:PORT",
              callback=lambda ctx, param, value: _executor(value),
              help="where runs are parsed: processes of this machine, or Ray tasks (this process still writes)")
@click.option("--ray-address", metavar="ADDRESS", default=None,
              help="the Ray cluster for --executor ray (HOST:PORT of its head; default: $RAY_ADDRESS, else a local Ray)")
@click.option("--strict", is_flag=True, help="exit non-zero when any ingest error or warning is recorded")
@click.option("--force", is_flag=True, help="re-read runs even when their files are unchanged, and store a copy of a "
                                          "stored run (the same files) under the model and labels given here")
@click.option("--allow-empty", is_flag=True, help="exit 0 when PATHS hold nothing to ingest")
@click.option("--verbose", "-v", is_flag=True, help=f"name every file skipped (else {EXAMPLES} for each reason)")
@db_option
@data_path_option
@format_option(("table", "json"), help="table: progress and a summary line; json: the summary as JSON")
@click.pass_context
def ingest(ctx, paths, model, label_pairs, jobs, executor, ray_address, strict, force, allow_empty, verbose, fmt):
    """Ingest the artifacts under PATHS (run folders, debug trees, trace logs, anything nested, or
    s3://bucket/prefix)."""
    from inductor_warehouse.ingest.load import ingest_paths
    from inductor_warehouse.ingest.ray_tasks import RayUnavailable
    from inductor_warehouse.ingest.remote import RemoteError

    executor, address = executor
    if ray_address and executor != "ray":
        raise click.BadParameter("--ray-address needs --executor ray", param_hint="--ray-address")
    try:
        summary = ingest_paths(list(paths), location(ctx), jobs=max(1, jobs), model=model, labels=labels(label_pairs),
                               progress=fmt == "table", force=force, wait=wait(ctx),
                               executor=executor, ray_address=ray_address or address)
    except (WarehouseError, RemoteError, RayUnavailable) as e:
        raise click.ClickException(str(e)) from e
    if fmt == "json":
        click.echo(summary.json())
    else:
        _report(summary, verbose)
    if summary.missing and not summary.runs and not summary.skipped_runs:
        raise click.ClickException("no such path; give a run folder, a torch_compile_debug folder or a trace log")
    if not (summary.runs or summary.skipped_runs or summary.refused or summary.failed or summary.copies or allow_empty):
        click.echo(f"warning: nothing to ingest under {', '.join(paths)}: no {KINDS_READ} was found", err=True)
        raise click.exceptions.Exit(1)
    if strict and summary.errors:
        raise click.ClickException(f"{plural(summary.errors, 'ingest problem')} recorded (--strict fails on errors "
                                   "and warnings alike)")
    if strict and summary.copies:
        raise click.ClickException(f"{plural(len(summary.copies), 'run')} not stored: the same files as a stored run "
                                   "named otherwise (--strict fails on it)")
    if strict and summary.renamed_unchanged:
        raise click.ClickException(f"{plural(len(summary.renamed_unchanged), 'unchanged run')} stored with other names "
                                   "than given, not renamed (--strict fails on it)")


def skipped_lines(skipped, verbose: bool = False) -> list[str]:
    """The files an ingest did not read, by reason (most first): a few named for each, the count of
    the rest and how to see them all; every one with `verbose`. A big ingest skips thousands of
    files, which a full list would bury the rest of the output under."""
    total = sum(skipped.values())
    if not total:
        return []
    how = "" if verbose else "; `--verbose` names every one, `--format json` lists them"
    lines = [f"skipped {plural(total, 'file')} (not errors{how}):"]
    for reason, n in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0])):
        why = WHY_SKIPPED.get(reason) or (COMPANION if reason.endswith(" with no run beside it") else None)
        lines.append(f"  {reason} x{n:,}" + (f" ({why})" if why else "") + ":")
        paths = skipped.paths.get(reason, [])
        shown = paths if verbose else _examples(paths, EXAMPLES)
        lines += [f"    {_shown(p)}" for p in shown]
        if n > len(shown):
            lines.append(f"    ... and {n - len(shown):,} more")
    return lines


def _examples(paths: list[str], n: int) -> list[str]:
    """`n` of the paths, files of different names first: what kinds of file were skipped tells more
    than the first few of one folder."""
    seen: set[str] = set()
    first = [p for p in paths if not (os.path.basename(p) in seen or seen.add(os.path.basename(p)))]  # type: ignore[func-returns-value]
    picked = first[:n]
    picked += [p for p in paths if p not in set(picked)][:n - len(picked)]
    return sorted(picked, key=paths.index)


def _shown(path: str) -> str:
    """A path below the working folder as the user would type it, others whole."""
    here = os.getcwd() + os.sep
    return path[len(here):] if path.startswith(here) else path


def _executor(value: str) -> tuple[str, str | None]:
    """(executor, Ray address): `ray://HOST:PORT` is Ray on that cluster."""
    if value in ("local", "ray"):
        return value, None
    if value.startswith("ray://"):
        return "ray", value
    raise click.BadParameter(f"{value!r} is not local, ray or ray://HOST:PORT", param_hint="--executor")


def _report(summary, verbose: bool = False) -> None:
    for p in summary.missing:
        click.echo(f"warning: {p} does not exist; nothing ingested from it", err=True)
    for line in skipped_lines(summary.skipped_files, verbose):
        click.echo(line, err=True)
    unknown = summary.unknown_records()
    if unknown:
        click.echo("trace records no release up to 2.14 writes (kept whole in trace_records, not errors; "
                   "`iwh query ingest/unknown_records`): "
                   + ", ".join(f"{k} x{v}" for k, v in sorted(unknown.items())), err=True)
    # errors before warnings: what lost data is what a reader must see first
    for e in sorted(summary.error_rows, key=lambda e: e["severity"] != "error")[:10]:
        base = e["source_path"]
        where = e.get("file") or (base if base.endswith(e["path"]) else f"{base}/{e['path']}")
        where += f":{e['line']}" if e.get("line") else ""
        click.echo(f"{e['severity']}: {where}: [{e['kind']}] {e['message']}", err=True)
    if summary.errors > 10:
        click.echo(f"... and {summary.errors - 10:,} more: `--format json` lists every one (error_rows), "
                   "`iwh query ingest/runs_with_errors` counts them by run", err=True)
    for listed, key in ((summary.copies, "copies_not_stored"), (summary.renamed_unchanged, "unchanged_named_otherwise")):
        for c in listed[:10]:
            click.echo(f"note: {c.message()}", err=True)
        if len(listed) > 10:
            click.echo(f"... and {len(listed) - 10:,} more: `--format json` lists every one ({key})", err=True)
    click.echo(summary.line())


@click.command(epilog="\b\nExample:\n  iwh migrate --db old.duckdb")
@db_option
@data_path_option
@click.pass_context
def migrate(ctx):
    """Create the warehouse or upgrade an older one in place."""
    from inductor_warehouse.store.file import older_storage
    from inductor_warehouse.store.writer import Writer

    where = location(ctx)
    try:
        with Writer(where, wait=wait(ctx)) as writer, writer.session() as con:
            applied = writer.applied
            old = older_storage(con)
    except WarehouseError as e:
        raise click.ClickException(str(e)) from e
    click.echo(f"{where.printable}: schema up to date" + (f" (applied {', '.join(applied)})" if applied else ""))
    if old:
        click.echo(f"It is stored in DuckDB's {old} format, without the string compressions of newer releases: "
                   f"`iwh --db {where.printable} copy NEW.duckdb` writes it in the current one, about a third of the size.")


@click.command("copy", epilog="\b\nExamples:\n  iwh copy 'ducklake:postgres:dbname=iwh host=db.internal user=iwh' --data-path s3://team-bucket/iwh\n"
                              "  iwh copy local.duckdb --db 'ducklake:postgres:dbname=iwh host=db.internal user=iwh'")
@click.argument("dest")
@db_option
@click.option("--data-path", "dest_data_path", metavar="DIR|s3://...", default=None,
              help="where DEST keeps its data files, when DEST is a new lake")
@click.pass_context
def copy(ctx, dest, dest_data_path):
    """Copy the warehouse (--db) into DEST, a new file or lake: every table, view and migration."""
    from inductor_warehouse.store.location import locate
    from inductor_warehouse.store.transfer import copy_warehouse

    source = location(ctx)
    target = locate(dest, dest_data_path or (ctx.obj or {}).get("data_path"))
    try:
        copied = copy_warehouse(source, target, wait(ctx))
    except WarehouseError as e:
        raise click.ClickException(str(e)) from e
    total = sum(copied.values())
    click.echo(f"copied {source.printable} into {target.printable}: {copied.get('runs', 0)} runs, {total:,} rows "
               f"in {len(copied)} tables")


@click.command("vacuum", epilog="\b\nExamples:\n  iwh vacuum --dry-run      # what would go\n"
                                "  iwh vacuum --keep-days 30")
@click.option("--keep-days", type=float, default=7, show_default=True, metavar="DAYS",
              help="expire the lake's snapshots older than this (the latest always stays)")
@click.option("--dry-run", is_flag=True, help="list what would be expired and deleted, and change nothing")
@db_option
@click.pass_context
def vacuum(ctx, keep_days, dry_run):
    """Tidy a lake: expire old snapshots, delete data files no snapshot references (left by killed writers)."""
    from inductor_warehouse.store.vacuum import vacuum as tidy

    where = location(ctx)
    if not where.is_lake:
        raise click.ClickException(f"{where.printable} is a file: DuckDB reuses its free space itself; "
                                   "`iwh vacuum` tidies a lake")
    try:
        done = tidy(where, keep_days=keep_days, dry_run=dry_run, wait=wait(ctx))
    except WarehouseError as e:
        raise click.ClickException(str(e)) from e
    verb = "would delete" if dry_run else "deleted"
    for path in done.unreferenced:
        click.echo(f"{verb} (no snapshot references it): {path}")
    for path in done.expired_files:
        click.echo(f"{verb} (only expired snapshots referenced it): {path}")
    click.echo(f"{where.printable}: {'would expire' if dry_run else 'expired'} {done.expired_snapshots} snapshots "
               f"older than {keep_days:g} days; {verb} {len(done.unreferenced)} data files no snapshot "
               f"references and {len(done.expired_files)} of expired snapshots")
