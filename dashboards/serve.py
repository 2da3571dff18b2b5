"""How the dashboards are served: the `streamlit run` command line for one warehouse, and whether
its port is free."""

from __future__ import annotations

import errno
import os
import socket
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


def port_taken(address: str, port: int) -> str | None:
    """Why `address:port` cannot be served on (another server listens there), or None when it can:
    asked before saying "serving", as Streamlit says it only once it fails."""
    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        return f"{address} is no address here ({e.strerror})"
    for family, kind, proto, _, where in infos:
        with socket.socket(family, kind, proto) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does: TIME_WAIT is no obstacle
            try:
                s.bind(where)
            except OSError as e:
                if e.errno == errno.EADDRINUSE:
                    return f"port {port} on {address} is in use by another program"
                if family == socket.AF_INET6 and e.errno == errno.EADDRNOTAVAIL:
                    continue  # no IPv6 here: the server listens on IPv4
                return f"cannot listen on {address}:{port}: {e.strerror}"
    return None


def streamlit_command(db: str, port: int, address: str, app: Path = APP) -> list[str]:
    """`db` a file goes on the command line; a lake's location only in $IWH_DB (the caller's), as it
    may hold a password that `ps` would show."""
    options = [f"--{k}={v}" for k, v in SETTINGS.items()]
    target = [] if db.startswith(LAKE_PREFIX) else ["--", os.path.abspath(db)]
    # dashboards/launch.py: `streamlit run`, its pages' HTML saying where the server is
    return [sys.executable, "-m", "inductor_warehouse.dashboards.launch", "run", str(app), *options,
            "--server.port", str(port), "--server.address", address, *target]
