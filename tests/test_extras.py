"""What the core install lacks, said as the extra to install: each command is run in a process
where the extra's modules cannot be imported (an import hook refuses them, as if they were not
installed), and must fail with one line naming the extra, not a traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import FIXTURES

RUN = FIXTURES / "runs" / "cpu-torch2.13" / "transformer"
LAKE = "ducklake:postgres:dbname=iwh host=127.0.0.1 port=1 user=iwh"

HIDING = """
import sys
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Hide())
from inductor_warehouse.cli.main import main
main()
"""


def iwh_without(hidden: tuple[str, ...], *args: str, cwd=None) -> subprocess.CompletedProcess:
    code = f"HIDDEN = {hidden!r}\n{HIDING}"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.mark.parametrize("hidden", [("duckdb_extension_ducklake",), ("duckdb_extension_postgres",), ("psycopg",)])
@pytest.mark.parametrize("command", [["runs"], ["ingest", str(RUN)]])
def test_a_lake_without_the_lake_extra_says_which_to_install(hidden, command, tmp_path):
    res = iwh_without(hidden, "--db", LAKE, *command, "--data-path", str(tmp_path / "data"), cwd=tmp_path)
    if command == ["runs"]:  # (runs takes no --data-path: ask again without it)
        res = iwh_without(hidden, "--db", LAKE, "runs", cwd=tmp_path)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    assert f"needs the [lake] extra, which is not installed ({hidden[0]})" in res.stderr
    assert "pip install 'inductor-warehouse[lake]'" in res.stderr
    assert not list(tmp_path.glob("*.duckdb"))


def test_lake_data_in_s3_without_the_s3_extra(tmp_path):
    res = iwh_without(("duckdb_extension_httpfs",), "--db", LAKE, "ingest", str(RUN), "--data-path", "s3://bucket/iwh",
                      cwd=tmp_path)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert "a lake's s3:// data needs the [s3] extra" in res.stderr
    assert "pip install 'inductor-warehouse[s3]'" in res.stderr


def test_ingest_from_s3_without_boto3(tmp_path):
    res = iwh_without(("boto3", "botocore"), "--db", str(tmp_path / "w.duckdb"), "ingest", "s3://bucket/runs", cwd=tmp_path)
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert "pip install 'inductor-warehouse[s3]'" in res.stderr


def test_executor_ray_without_ray(tmp_path):
    res = iwh_without(("ray",), "--db", str(tmp_path / "w.duckdb"), "ingest", str(RUN), "--executor", "ray", cwd=tmp_path)
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert "pip install 'inductor-warehouse[ray]'" in res.stderr


def test_the_core_works_with_the_extras_hidden(tmp_path):
    # the hook is shown to hide nothing the core needs: a file warehouse ingests and reads as usual
    hidden = ("duckdb_extension_ducklake", "duckdb_extension_postgres", "duckdb_extension_httpfs", "psycopg", "boto3",
              "botocore", "ray", "moto", "scipy", "playwright")
    db = str(tmp_path / "w.duckdb")
    ingest = iwh_without(hidden, "--db", db, "ingest", str(RUN), cwd=tmp_path)
    assert ingest.returncode == 0, ingest.stderr
    runs = iwh_without(hidden, "--db", db, "runs", "--format", "csv", cwd=tmp_path)
    assert runs.returncode == 0 and "transformer" in runs.stdout


def test_extensions_are_found_under_duckdbs_own_platform_name(tmp_path, monkeypatch):
    import duckdb

    from inductor_warehouse.store.extensions import extension_directory

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    platform = duckdb.connect().execute("PRAGMA platform").fetchone()[0]
    folder = tmp_path / "inductor-warehouse" / "duckdb-extensions" / f"v{duckdb.__version__}" / platform
    assert extension_directory() == str(tmp_path / "inductor-warehouse" / "duckdb-extensions")
    assert sorted(p.name for p in folder.iterdir()) == ["ducklake.duckdb_extension", "httpfs.duckdb_extension",
                                                        "postgres_scanner.duckdb_extension"]
    con = duckdb.connect(config={"extension_directory": extension_directory(), "autoinstall_known_extensions": False})
    con.execute("LOAD ducklake")  # found by name where DuckDB looks on this platform
