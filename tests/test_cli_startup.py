"""`iwh` starts without polars, Ray or boto3: only commands that need them import them (polars ~85 ms a start, Ray ~0.7 s)."""

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


def test_starting_the_cli_or_a_local_ingest_imports_no_ray_or_boto3():
    # Ray (~0.7 s) and boto3 are imported only by --executor ray and s3:// paths
    code = "import sys, cli.main, ingest.load; print(sorted({'ray', 'boto3'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
