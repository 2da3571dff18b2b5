"""Commands say what happened and exit accordingly: nothing to ingest, a busy port, a side compared
with itself, the version; a run's bookkeeping is a fact of the run, not a label to filter or compare on."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from inductor_warehouse.analysis.canned_rows import run_query
from inductor_warehouse.cli.main import cli
from tests.conftest import CPU_CORPUS_ARCHIVES, reader, unpack_cpu_corpora


def iwh(*args: str, **kw):
    return CliRunner().invoke(cli, list(args), **kw)


@pytest.mark.parametrize("what", ["empty folder", "/etc", "random bytes"])
def test_nothing_to_ingest_is_a_warning_and_a_failure(tmp_path, what):
    db = str(tmp_path / "wh.duckdb")
    if what == "empty folder":
        path = tmp_path / "empty"
        path.mkdir()
    elif what == "random bytes":
        path = tmp_path / "blob.bin"
        path.write_bytes(os.urandom(4096))
    else:
        path = Path("/etc")
    res = iwh("--db", db, "ingest", str(path))
    assert res.exit_code == 1 and "warning: nothing to ingest" in res.output, res.output
    assert iwh("--db", db, "ingest", str(path), "--allow-empty").exit_code == 0


def test_a_busy_port_fails_before_serving(tmp_path):
    db = str(tmp_path / "wh.duckdb")
    assert iwh("--db", db, "ingest", str(tmp_path), "--allow-empty").exit_code == 0
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        res = subprocess.run([sys.executable, "-m", "inductor_warehouse", "--db", db, "dashboard", "--address",
                              "127.0.0.1", "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 1 and "serving" not in res.stdout
    assert f"port {port} on 127.0.0.1 is in use" in res.stderr


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    from inductor_warehouse.ingest.load import ingest_paths

    root = tmp_path_factory.mktemp("exits")
    folders = unpack_cpu_corpora(root)
    db = str(root / "wh.duckdb")
    ingest_paths(folders, db)
    return db, folders


@pytest.mark.parametrize("head", ["compiler=2.13", "compiler=2.13,mode=train", " compiler=2.13 "])
def test_a_side_compared_with_itself_is_refused(corpora, head):
    db, _ = corpora
    base = "mode=train,compiler=2.13" if "mode" in head else "compiler=2.13"
    res = iwh("--db", db, "compare", "--base", base, "--head", head)
    assert res.exit_code == 2 and "select the same runs" in res.output


def test_version():
    from importlib.metadata import version

    res = iwh("--version")
    assert res.exit_code == 0 and res.output.strip() == f"iwh {version('inductor-warehouse')}"


def test_bookkeeping_is_no_filter_no_side_no_series_order(corpora):
    """The corpora's manifests carry `torch` (and the zoo's `python`, `exit_code`, `torch_git`...):
    facts of the run. None is offered as a filter, a compare side or an order of a series; the workload
    labels still are."""
    db, folders = corpora
    manifest_keys = {k for f in folders for m in f.rglob("manifest.json") for k in json.loads(m.read_text())}
    assert {"torch", "model"} <= manifest_keys and len(CPU_CORPUS_ARCHIVES) == 3
    with reader(db) as con:
        facts = {r[0] for r in con.execute("SELECT unnest(run_fact_keys())").fetchall()}
        sides = {r["selector"].split("=", 1)[0] for r in run_query(con, "dashboard/compare_sides")}
        filters = {r["value"].split("=", 1)[0] for r in run_query(con, "dashboard/filter_options") if r["facet"] == "label"}
        orders = {r["label"] for r in run_query(con, "dashboard/label_keys")}
    assert "torch" in facts and "exit_code" in facts and "python" in facts
    assert not (sides | filters | orders) & facts
    assert "compiler" in sides
