"""How the dashboards are served: the `streamlit run` command line for one warehouse."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from inductor_warehouse.store.location import LAKE_PREFIX

APP = Path(__file__).parent / "app.py"


# Served inside companies' networks and offline: no usage statistics sent, no Deploy button or
# developer menu, exceptions shown in full but without links to outside search engines.
SETTINGS = {
    "server.headless": "true",
    "browser.gatherUsageStats": "false",
    "client.toolbarMode": "minimal",
    "client.showErrorLinks": "false",
    "client.showErrorDetails": "full",
}


def streamlit_command(db: str, port: int, address: str, app: Path = APP) -> list[str]:
    """`db` a file goes on the command line; a lake's location only in $IWH_DB (the caller's), as it
    may hold a password that `ps` would show."""
    options = [f"--{k}={v}" for k, v in SETTINGS.items()]
    target = [] if db.startswith(LAKE_PREFIX) else ["--", os.path.abspath(db)]
    return [sys.executable, "-m", "streamlit", "run", str(app), *options,
            "--server.port", str(port), "--server.address", address, *target]
