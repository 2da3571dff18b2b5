"""How the dashboards are served: the `streamlit run` command line for one warehouse."""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = Path(__file__).parent / "app.py"


def streamlit_command(db: str, port: int, address: str) -> list[str]:
    return [
        sys.executable, "-m", "streamlit", "run", str(APP),
        "--server.headless", "true", "--server.port", str(port), "--server.address", address,
        "--browser.gatherUsageStats", "false",
        "--", os.path.abspath(db),
    ]
