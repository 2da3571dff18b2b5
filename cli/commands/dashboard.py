"""`iwh dashboard`: serve the Streamlit dashboards, read-only, on the chosen warehouse."""

from __future__ import annotations

import os
import sys

import click

from inductor_warehouse.cli.options import db_option, location
from inductor_warehouse.dashboards.serve import port_taken, streamlit_command


@click.command("dashboard", epilog="\b\nExamples:\n  iwh dashboard\n  iwh dashboard --db team.duckdb --port 8600")
@click.option("--port", type=int, default=8501, show_default=True, help="port to serve on")
@click.option("--address", default="localhost", show_default=True, help="address to listen on (0.0.0.0: everyone)")
@db_option
@click.pass_context
def dashboard_command(ctx: click.Context, port: int, address: str) -> None:
    """Serve the dashboards (read-only) on http://ADDRESS:PORT."""
    where = location(ctx)
    if not where.exists():
        raise click.ClickException(f"No warehouse at {where.printable}. "
                                   f"Create one with `iwh ingest PATH --db {where.printable}`.")
    taken = port_taken(address, port)
    if taken:
        raise click.ClickException(f"{taken}; choose another with --port (e.g. --port {port + 1})")
    click.echo(f"serving {where.printable} on http://{address}:{port} (Ctrl-C or `kill {os.getpid()}` stops)")
    db = where.text if where.is_lake else where.path
    command = streamlit_command(db, port, address)
    sys.stdout.flush()
    # this process becomes the server: stopping it stops the server, as a child left serving did not
    os.execve(command[0], command, {**os.environ, "IWH_DB": db})
