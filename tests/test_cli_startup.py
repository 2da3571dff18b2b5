"""`iwh` starts without polars: only commands that print frames import it (~85 ms a start)."""

from __future__ import annotations

import subprocess
import sys

from cli import options
from schema import frames


def test_the_cli_offers_the_formats_frames_writes():
    assert options.FORMATS == frames.FORMATS


def test_starting_the_cli_imports_no_polars():
    code = "import sys, cli.main; print('polars' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
