"""`iwh`: the inductor-warehouse command line."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import duckdb

from schema import queries as canned
from schema.warehouse import WarehouseError, default_db_path

# ingest.output.FORMATS, spelled out here: importing ingest.output (and with it polars, ~85 ms)
# on every start would slow `iwh ingest` and `--help`, which print no frames
FORMATS = ("table", "csv", "json")
format_option = click.option(
    "--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
    help="table for people, csv or json for scripts",
)


def _label(values: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for v in values:
        if "=" not in v:
            raise click.BadParameter(f"{v!r} is not k=v (e.g. --label variant=default)", param_hint="--label")
        k, _, val = v.partition("=")
        out[k.strip()] = val.strip()
    return out


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--db", default=None, metavar="PATH",
              help=f"warehouse file (default: $IWH_DB or ./{Path(default_db_path()).name})")
@click.pass_context
def cli(ctx: click.Context, db: str | None) -> None:
    """A DuckDB warehouse for torch.compile / TorchInductor debug artifacts."""
    ctx.obj = {"db": db or default_db_path()}


def _warehouse(ctx: click.Context):
    from schema.api import Warehouse

    try:
        return Warehouse(ctx.obj["db"])
    except WarehouseError as e:
        raise click.ClickException(str(e)) from e
    except duckdb.IOException as e:
        raise click.ClickException(
            f"cannot open {ctx.obj['db']}: {e}. Is another `iwh ingest` writing it? Wait for it to finish."
        ) from e


@cli.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--model", help="model name for runs without a manifest.json")
@click.option("--label", "labels", multiple=True, metavar="K=V", help="label for runs (manifest keys win)")
@click.option("--jobs", "-j", type=int, default=1, show_default=True, help="parse runs in N processes")
@click.option("--strict", is_flag=True, help="exit non-zero when any ingest error is recorded")
@click.option("--force", is_flag=True, help="re-read runs even when their files are unchanged")
@click.pass_context
def ingest(ctx, paths, model, labels, jobs, strict, force):
    """Ingest the artifacts under PATHS (run folders, debug trees, trace logs, anything nested)."""
    from ingest.load import ingest_paths

    try:
        summary = ingest_paths(list(paths), ctx.obj["db"], jobs=max(1, jobs), model=model,
                               labels=_label(labels), progress=True, force=force)
    except duckdb.IOException as e:
        raise click.ClickException(f"cannot write {ctx.obj['db']}: {e}") from e
    for p in summary.missing:
        click.echo(f"warning: {p} does not exist; nothing ingested from it", err=True)
    if summary.skipped_files:
        parts = ", ".join(f"{n} {why}" for why, n in summary.skipped_files.most_common())
        click.echo(f"skipped files: {parts}", err=True)
    unknown = {k: v for k, v in summary.counters.items() if k.startswith("unknown")}
    if unknown:
        click.echo("not understood (counted, not errors): "
                   + ", ".join(f"{k.split(':', 1)[-1]} x{v}" for k, v in sorted(unknown.items())), err=True)
    for e in summary.error_rows[:10]:
        base = e["source_path"]
        where = (base if base.endswith(e["path"]) else f"{base}/{e['path']}") + (f":{e['line']}" if e.get("line") else "")
        click.echo(f"{e['severity']}: {where}: [{e['kind']}] {e['message']}", err=True)
    if summary.errors > 10:
        click.echo(f"... and {summary.errors - 10} more: `iwh sql \"SELECT * FROM ingest_errors\"`", err=True)
    click.echo(summary.line())
    if summary.missing and not summary.runs and not summary.skipped_runs:
        raise click.ClickException("no such path; give a run folder, a torch_compile_debug folder or a trace log")
    if strict and summary.errors:
        raise click.ClickException(f"{summary.errors} ingest errors (--strict)")


@cli.command()
@format_option
@click.option("--model", help="only this model")
@click.option("--limit", type=int, default=None, help="at most N runs (newest first)")
@click.pass_context
def runs(ctx, fmt, model, limit):
    """List runs: model, compiler version, device, graphs, kernels, errors."""
    from ingest.output import emit

    with _warehouse(ctx) as wh:
        emit(wh.query("overview/runs", model=model, limit=limit), fmt)


@cli.command()
@click.argument("text")
@format_option
@click.pass_context
def sql(ctx, text, fmt):
    """Run read-only SQL on the warehouse."""
    from ingest.output import emit

    with _warehouse(ctx) as wh:
        try:
            df = wh.sql(text)
        except duckdb.Error as e:
            raise click.ClickException(f"{type(e).__name__}: {e}".strip()) from e
        emit(df, fmt)


@cli.command("queries")
@format_option
def list_queries(fmt):
    """List the canned queries."""
    import polars as pl

    from ingest.output import emit

    rows = [{"name": q.name, "title": q.title,
             "params": " ".join(f"{p.name}:{p.type}" for p in q.params)} for q in canned.all_queries()]
    emit(pl.DataFrame(rows, schema={"name": pl.String, "title": pl.String, "params": pl.String}), fmt)


@cli.command()
@click.argument("name")
@click.option("-p", "--param", "params", multiple=True, metavar="K=V", help="query parameter")
@click.option("--show-sql", is_flag=True, help="print the SQL instead of running it")
@click.option("--format", "fmt", type=click.Choice(FORMATS + ("markdown",)), default="table", show_default=True)
@click.pass_context
def query(ctx, name, params, show_sql, fmt):
    """Run the canned query NAME (see `iwh queries`)."""
    from ingest.output import emit

    try:
        q = canned.get(name)
        if show_sql:
            click.echo(q.sql)
            return
        with _warehouse(ctx) as wh:
            emit(wh.query(q.name, **_label(params)), fmt)
    except canned.QueryError as e:
        raise click.ClickException(str(e)) from e


@cli.command()
@click.pass_context
def migrate(ctx):
    """Create the warehouse or upgrade an older one in place."""
    from schema.warehouse import migrate as run_migrations

    con = duckdb.connect(ctx.obj["db"])
    try:
        applied = run_migrations(con)
    finally:
        con.close()
    click.echo(f"{ctx.obj['db']}: schema up to date" + (f" (applied {', '.join(applied)})" if applied else ""))


def _register_commands() -> None:
    """Commands that live in modules of their own (imported here, so `iwh --help` lists them)."""
    from dashboards.serve import dashboard_command
    from ingest.capture import capture_command
    from ingest.compare import compare_command
    from ingest.export import export_command

    for command in (capture_command, compare_command, export_command, dashboard_command):
        cli.add_command(command)


_register_commands()


def main() -> None:
    try:
        cli(standalone_mode=True)
    except KeyboardInterrupt:
        sys.exit(130)
