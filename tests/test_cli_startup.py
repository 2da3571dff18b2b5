"""`iwh` starts without polars, Ray or boto3: only commands that need them import them (polars ~85 ms a start, Ray ~0.7 s)."""

from __future__ import annotations

import subprocess
import sys

from inductor_warehouse.cli import options
from inductor_warehouse.schema import output


def test_the_cli_offers_the_formats_output_writes():
    assert options.FORMATS == output.FORMATS


def test_starting_the_cli_imports_no_polars():
    code = "import sys, inductor_warehouse.cli.main; print('polars' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_starting_the_cli_or_a_local_ingest_imports_no_ray_or_boto3():
    # Ray (~0.7 s) and boto3 are imported only by --executor ray and s3:// paths
    code = ("import sys, inductor_warehouse.cli.main, inductor_warehouse.ingest.load; "
            "print(sorted({'ray', 'boto3'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_commands_run_without_pandas_or_numpy(tmp_path):
    """DuckDB and pyarrow would import pandas (0.3-0.45 s) to check a parameter's or an array's type,
    and pyarrow numpy as it loads; the command line refuses both (cli/lean.py), and an ingest, a
    query, a comparison and the exports still work."""
    from tests.conftest import FIXTURES, IWH

    db = str(tmp_path / "wh.duckdb")
    probe = ("import atexit, sys; atexit.register(lambda: print('imported:', "
             "sorted({'pandas', 'numpy'} & set(sys.modules))))")
    iwh = [IWH[0], "-c", probe + "; " + IWH[2]]
    for args in (["ingest", str(FIXTURES / "runs" / "cpu-torch2.13"), "--jobs", "2"],
                 ["query", "kernel_count_trend", "-p", "model=transformer"],
                 ["compare", "--base", "compiler=2.13", "--head", "compiler=2.13.0"],
                 ["export", str(tmp_path / "parquet"), "--table", "kernels"],
                 ["query", "kernel_category_mix", "--format", "json"]):
        done = subprocess.run(iwh + ["--db", db, *args], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert "imported: []" in done.stdout, args
    assert "transformer" in subprocess.run(iwh + ["--db", db, "runs"], capture_output=True, text=True).stdout


def test_an_ingest_imports_no_pyarrow_compute_dataset_or_parquet(tmp_path):
    """pyarrow.compute, .dataset and .parquet took 50 to 70 ms of every ingest: the parse converts
    rows without them, DuckDB scans Arrow C streams (a pa.Table it scans through pyarrow.dataset),
    and only a log long enough to spill writes Parquet. With --jobs 1 the parse runs in the
    command's own process too."""
    from tests.conftest import FIXTURES, IWH

    probe = ("import atexit, sys; atexit.register(lambda: print('imported:', sorted("
             "{'pyarrow.compute', 'pyarrow.dataset', 'pyarrow.parquet'} & set(sys.modules))))")
    for jobs in ("1", "2"):
        db = str(tmp_path / f"wh{jobs}.duckdb")
        done = subprocess.run([IWH[0], "-c", probe + "; " + IWH[2], "--db", db, "ingest",
                               str(FIXTURES / "runs" / "cpu-torch2.13"), "--jobs", jobs],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("ingested 1 run, 2 graphs, 10 kernels, 0 errors")
        assert "imported: []" in done.stdout
