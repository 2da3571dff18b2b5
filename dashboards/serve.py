"""`iwh dashboard`: serve the Streamlit app on the warehouse chosen with `iwh --db`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

APP = Path(__file__).parent / "app.py"


def streamlit_command(db: str, port: int, address: str) -> list[str]:
    return [
        sys.executable, "-m", "streamlit", "run", str(APP),
        "--server.headless", "true", "--server.port", str(port), "--server.address", address,
        "--browser.gatherUsageStats", "false",
        "--", os.path.abspath(db),
    ]


@click.command()
@click.option("--db", "db_option", default=None, metavar="PATH", help="warehouse file (overrides iwh --db)")
@click.option("--port", type=int, default=8501, show_default=True, help="port to serve on")
@click.option("--address", default="localhost", show_default=True, help="address to listen on (0.0.0.0: everyone)")
@click.pass_context
def dashboard_command(ctx: click.Context, db_option: str | None, port: int, address: str) -> None:
    """Serve the dashboards (read-only) on http://ADDRESS:PORT."""
    db = db_option or ctx.obj["db"]
    if not Path(db).exists():
        raise click.ClickException(f"No warehouse at {db}. Create one with `iwh --db {db} ingest PATH`.")
    click.echo(f"serving {db} on http://{address}:{port} (Ctrl-C stops)")
    env = {**os.environ, "IWH_DB": os.path.abspath(db)}
    sys.exit(subprocess.call(streamlit_command(db, port, address), env=env))
