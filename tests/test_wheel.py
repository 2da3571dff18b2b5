"""The package works on its own, as a user installs it: a wheel built from the checkout, installed
with its core dependencies only into a new virtualenv in another folder, then used from a folder
that is not the checkout: ingest real runs, list them, run a canned query, a compare that gates, and
serve the dashboard. Also under Python 3.10 where one is installed. `make test-wheel` runs this (CI does, after
`make test`); it is left out of `make test` (it installs the core's dependencies, ~40 s a Python).
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT

pytestmark = pytest.mark.wheel

EXTRAS_ONLY = ("ray", "boto3", "moto", "playwright", "scipy", "psycopg", "duckdb_extension_ducklake",
               "duckdb_extension_postgres", "duckdb_extension_httpfs", "hypothesis", "pytest")
LAKE = "ducklake:postgres:dbname=iwh host=127.0.0.1 port=1 user=iwh"
# five small models under torch 2.13.0 and 2.14.1 (demo/README.md); ca fails to compile three
# frames under 2.14.1 and runs them eagerly
CORPORA = ("shared-cpu-torch2.13", "shared-cpu-torch2.14.1")


def python310() -> str | None:
    """A Python 3.10 (the oldest supported) that runs: $IWH_TEST_PY310, python3.10, pyenv's."""
    candidates = [os.environ.get("IWH_TEST_PY310"), shutil.which("python3.10"),
                  *map(str, sorted(Path.home().glob(".pyenv/versions/3.10*/bin/python")))]
    for candidate in filter(None, candidates):
        ran = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 10))"],
                             capture_output=True, text=True)
        if ran.returncode == 0 and ran.stdout.strip() == "True":
            return candidate
    return None


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel pip builds from a copy of the checkout's files (tracked, and new ones not ignored),
    so that nothing a developer built in place (build/, *.egg-info) can slip into it."""
    src = tmp_path_factory.mktemp("src")
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        if (ROOT / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    (whl,) = out.glob("inductor_warehouse-*.whl")
    return whl


def test_the_wheel_holds_one_namespace_and_every_file_the_code_opens(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"inductor_warehouse", wheel.name.split("-py3")[0] + ".dist-info"}
    # every file of the installed folders (git's view), under the namespace
    tracked = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", *("inductor_warehouse", "schema", "ingest",
                              "analysis", "dashboards", "cli")], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    expected = {("" if rel.startswith("inductor_warehouse/") else "inductor_warehouse/") + rel for rel in tracked}
    assert expected - set(names) == set()
    for needed in ("inductor_warehouse/schema/current.sql", "inductor_warehouse/schema/read_functions.txt",
                   "inductor_warehouse/dashboards/static/icon.png", "inductor_warehouse/dashboards/sections/overview.py",
                   "inductor_warehouse/schema/queries/kernels/kernel_count_trend.sql",
                   "inductor_warehouse/ingest/causes/graph_break_registry.json"):
        assert needed in names


@pytest.fixture(scope="module", params=["this", "3.10"], ids=[f"python{sys.version_info[0]}.{sys.version_info[1]}", "python3.10"])
def installed(request, wheel, tmp_path_factory) -> Path:
    """A new virtualenv, in a folder of its own, with the wheel and its core dependencies: under
    this Python, and under a 3.10 where one is installed."""
    python = sys.executable if request.param == "this" else python310()
    if python is None:
        pytest.skip("no Python 3.10 here (set IWH_TEST_PY310 to one)")
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
                          capture_output=True, text=True, cwd=venv)
    assert done.returncode == 0, done.stderr[-3000:]
    return venv


def run(venv: Path, *args: str, cwd: Path, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "IWH_DB", "VIRTUAL_ENV")}
    return subprocess.run([str(venv / "bin" / args[0]), *args[1:]], capture_output=True, text=True, cwd=cwd,
                          env={**env, **kw.pop("env", {})}, timeout=kw.pop("timeout", 300))


def test_site_packages_gains_one_namespace_and_no_extra(installed):
    site = Path(run(installed, "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                    cwd=installed).stdout.strip())
    (record,) = site.glob("inductor_warehouse-*.dist-info/RECORD")
    tops = {row[0].split("/")[0] for row in csv.reader(io.StringIO(record.read_text())) if row}
    assert {t for t in tops if not t.startswith("..")} == {"inductor_warehouse", record.parent.name}
    for module in EXTRAS_ONLY:
        assert not (site / module).exists() and not list(site.glob(f"{module}-*.dist-info")), module


@pytest.fixture(scope="module")
def corpora(tmp_path_factory) -> list[Path]:
    out = tmp_path_factory.mktemp("corpora")
    for name in CORPORA:
        with tarfile.open(ROOT / "demo" / f"{name}.tar.xz") as tf:
            tf.extractall(out / name, filter="data")
    return [out / name for name in CORPORA]


def generated_kernels(folder: Path) -> int:
    """The transformer's generated kernels read off its output code: `cpp_fused_*` definitions."""
    return sum(len(re.findall(r"^cpp_fused_\w+ = async_compile", p.read_text(), re.M))
               for p in folder.rglob("output_code.py") if "transformer" in p.relative_to(folder).parts)


def test_ingest_runs_query_compare_and_dashboard_outside_the_checkout(installed, corpora, tmp_path):
    work = tmp_path / "elsewhere"
    work.mkdir()
    where = run(installed, "python", "-c", "import inductor_warehouse.store.writer as w; print(w.__file__)", cwd=work)
    assert where.returncode == 0 and Path(where.stdout.strip()).is_relative_to(installed), where.stdout + where.stderr

    ingest = run(installed, "iwh", "ingest", *map(str, corpora), "--strict", cwd=work)
    assert ingest.returncode == 0, ingest.stderr
    assert "ingested 10 runs" in ingest.stdout and (work / "warehouse.duckdb").exists()

    runs = run(installed, "iwh", "runs", "--format", "csv", cwd=work)
    assert runs.returncode == 0, runs.stderr
    listed = list(csv.DictReader(io.StringIO(runs.stdout)))
    assert sorted((r["model"], r["compiler_version"]) for r in listed) == sorted(
        (m, v) for m in ("ca", "cnn", "dynamic", "mlp", "transformer") for v in ("2.13.0+cpu", "2.14.1+cu130"))

    trend = run(installed, "iwh", "query", "kernels/kernel_count_trend", "-p", "model=transformer", "--format", "csv",
                cwd=work)
    assert trend.returncode == 0, trend.stderr
    rows = {r["compiler_version"]: int(r["kernels"]) for r in csv.DictReader(io.StringIO(trend.stdout))}
    assert rows == {"2.13.0+cpu": generated_kernels(corpora[0]), "2.14.1+cu130": generated_kernels(corpora[1])}
    assert rows["2.13.0+cpu"] > 0

    # the gate: ca's compile failures under 2.14.1 (frames that ran eagerly) are a regression
    compare = run(installed, "iwh", "compare", "--base", "compiler=2.13", "--head", "compiler=2.14", "--fail-on",
                  "regression", "--format", "markdown", cwd=work)
    assert compare.returncode == 1, compare.stdout + compare.stderr
    assert "3 regressions: ca failures, ca fallbacks, ca recompiles" in compare.stdout
    assert "5 workloads of 5 models on both sides" in compare.stdout

    # the extras' commands say which extra to install, with the extras really absent
    lake = run(installed, "iwh", "--db", LAKE, "runs", cwd=work)
    assert lake.returncode == 1 and "pip install 'inductor-warehouse[lake]'" in lake.stderr, lake.stderr
    ray = run(installed, "iwh", "ingest", str(FIXTURES / "runs" / "cpu-torch2.13"), "--executor", "ray",
              "--db", str(work / "other.duckdb"), cwd=work)
    assert ray.returncode != 0 and "pip install 'inductor-warehouse[ray]'" in ray.stderr, ray.stderr

    # the dashboard: the installed app renders its first page, and `iwh dashboard` serves it
    page = run(installed, "python", "-c", (
        "import sys, inductor_warehouse.dashboards as d; from pathlib import Path; "
        "from streamlit.testing.v1 import AppTest; "
        "at = AppTest.from_file(str(Path(d.__file__).parent / 'app.py'), default_timeout=120).run(); "
        "assert not at.exception, [e.value for e in at.exception]; "
        "print(dict((m.label, m.value) for m in at.metric))"),
        cwd=work, env={"IWH_DB": str(work / "warehouse.duckdb")})
    assert page.returncode == 0, page.stderr[-3000:]
    metrics = eval(page.stdout.strip().splitlines()[-1])  # the Overview's counts
    assert (metrics["Runs"], metrics["Models"]) == ("10", "5"), metrics
    serve_and_fetch(installed, work)


def serve_and_fetch(venv: Path, work: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "IWH_DB")}
    server = subprocess.Popen([str(venv / "bin" / "iwh"), "dashboard", "--port", str(port), "--address", "127.0.0.1"],
                              cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline, health = time.time() + 90, None
        while time.time() < deadline and health != b"ok":
            try:
                health = urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read()
            except OSError:
                time.sleep(0.3)
        assert health == b"ok", server.stdout.read1().decode(errors="replace") if server.poll() is not None else "no answer"
        page = urllib.request.urlopen(f"{url}/trends", timeout=10)  # a page's URL: the app's shell
        assert page.status == 200 and "<noscript>" in page.read().decode()
    finally:
        server.terminate()
        server.wait(timeout=30)
