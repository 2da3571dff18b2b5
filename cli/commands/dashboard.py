"""`iwh dashboard`: serve the Streamlit dashboards, read-only, on the chosen warehouse."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

from cli.options import db_option, location
from dashboards.serve import streamlit_command


@click.command("dashboard", epilog="\b\nExamples:\n  iwh dashboard\n  iwh dashboard --db team.duckdb --port 8600")
@click.option("--port", type=int, default=8501, show_default=True, help="port to serve on")
@click.option("--address", default="localhost", show_default=True, help="address to listen on (0.0.0.0: everyone)")
@db_option
@click.pass_context
def dashboard_command(ctx: click.Context, port: int, address: str) -> None:
    """Serve the dashboards (read-only) on http://ADDRESS:PORT."""
    db = location(ctx)
    if not Path(db).exists():
        raise click.ClickException(f"No warehouse at {db}. Create one with `iwh ingest PATH --db {db}`.")
    click.echo(f"serving {db} on http://{address}:{port} (Ctrl-C stops)")
    env = {**os.environ, "IWH_DB": os.path.abspath(db)}
    sys.exit(subprocess.call(streamlit_command(db, port, address), env=env))
