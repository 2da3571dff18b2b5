"""`iwh`: the inductor-warehouse command line. Every command is registered here, in one place."""

from __future__ import annotations

import importlib
import os
import sys

import click
import duckdb

from inductor_warehouse.cli.lean import lean_imports
from inductor_warehouse.cli.options import DATA_PATH_HELP, DB_HELP, FORMATS, WAIT_HELP
from inductor_warehouse.store.location import redact
from inductor_warehouse.store.errors import WarehouseError, damage_report, first_line

EXAMPLES = """\b
Examples:
  iwh ingest runs/ --jobs 2                 # artifacts -> ./warehouse.duckdb
  iwh runs --db team.duckdb                 # --db and --format go before or after the command
  iwh query fusion_rate_by_model_version --format csv
  iwh compare --base compiler=2.13 --head compiler=2.14
  iwh dashboard
  iwh copy 'ducklake:postgres:dbname=iwh host=db user=iwh' --data-path s3://bucket/iwh   # file -> team lake
"""


# every command: its name, and where it is (module of cli/commands, attribute)
COMMAND_PLACES = {
    "ingest": ("ingest", "ingest"), "migrate": ("ingest", "migrate"), "copy": ("ingest", "copy"),
    "vacuum": ("ingest", "vacuum"),
    "runs": ("query", "runs"), "sql": ("query", "sql"), "queries": ("query", "list_queries"),
    "query": ("query", "query"),
    "export": ("export", "export_command"),
    "compare": ("compare", "compare_command"), "changes": ("compare", "changes_command"),
    "capture": ("capture", "capture_command"),
    "dashboard": ("dashboard", "dashboard_command"),
}


class _Commands(click.Group):
    """Imports a command's module when the command runs, so that `iwh ingest` does not pay for the
    imports of compare or capture; `iwh --help` imports them all."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMAND_PLACES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        place = COMMAND_PLACES.get(cmd_name)
        if place is None:
            return None
        module = importlib.import_module(f"inductor_warehouse.cli.commands.{place[0]}")
        command: click.Command = getattr(module, place[1])
        return command


def all_commands() -> list[click.Command]:
    """Every command, imported."""
    return [c for name in COMMAND_PLACES if (c := cli.get_command(click.Context(cli), name)) is not None]


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXAMPLES)
@click.version_option(package_name="inductor-warehouse", prog_name="iwh", message="%(prog)s %(version)s")
@click.option("--db", default=None, metavar="LOCATION", help=DB_HELP)
@click.option("--format", "fmt", default=None, metavar="FORMAT",
              help=f"default output format of the command ({'|'.join(FORMATS)}, ...)")
@click.option("--data-path", default=None, metavar="DIR|s3://...", help=DATA_PATH_HELP)
@click.option("--wait", type=float, default=None, metavar="SECONDS", help=WAIT_HELP)
@click.pass_context
def cli(ctx: click.Context, db: str | None, fmt: str | None, data_path: str | None, wait: float | None) -> None:
    """A DuckDB warehouse for torch.compile / TorchInductor debug artifacts."""
    ctx.ensure_object(dict).update(db=db, format=fmt, data_path=data_path, wait=wait)


def main() -> None:
    lean_imports()
    try:
        cli(standalone_mode=True)
    except KeyboardInterrupt:
        sys.exit(130)
    except (duckdb.Error, WarehouseError) as e:
        # a command that did not say it: one line, never a traceback
        said = damage_report(e) or redact(first_line(e))
        click.echo(f"Error: {said}", err=True)
        sys.exit(1)
    finally:
        _flush_quietly()


def _flush_quietly() -> None:
    """Flush the output now, so that a reader gone early (`iwh runs | head`) ends the command quietly
    rather than with a traceback at exit (the recipe of the `signal` module's notes on SIGPIPE)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
