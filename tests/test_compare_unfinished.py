"""A run whose process did not finish (killed mid-compile: `iwh capture --timeout` writes
`timed_out` and exit 124 into its manifest) is no sample of what the compiler makes: compare
judges none of its counts, and a head that did not finish is a regression of the gate, as HUD fails
a model that timed out. Found by a capture hunt: a resnet18 killed in Inductor's code generation
compared as "kernels 32 -> 0, -100%, improvement" and `--fail-on regression` passed."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

HEALTHY = FIXTURES / "runs" / "cpu-torch2.13" / "transformer"
KILLED = FIXTURES / "killed" / "transformer_killed_in_inductor"


def _warehouse(tmp_path):
    shutil.copytree(HEALTHY, tmp_path / "runs" / "healthy")
    shutil.copytree(KILLED, tmp_path / "runs" / "killed")
    db = str(tmp_path / "w.duckdb")
    ingest_paths([tmp_path / "runs"], db)
    with reader(db) as con:
        ids = dict(con.execute("SELECT split_part(source_path, '/', -1), run_id FROM runs").fetchall())
    return db, ids["healthy"], ids["killed"]


def _compare(db, base, head):
    res = CliRunner().invoke(cli, ["compare", "--base", base, "--head", head, "--db", db, "--format", "json",
                                   "--fail-on", "regression"])
    return res.exit_code, json.loads(res.stdout)


def test_a_head_that_did_not_finish_fails_the_gate_and_its_counts_are_no_sample(tmp_path):
    manifest = json.loads((KILLED / "manifest.json").read_text())
    assert manifest["timed_out"] is True and manifest["exit_code"] == 124  # what the capture wrote
    db, healthy, killed = _warehouse(tmp_path)
    code, out = _compare(db, healthy, killed)
    [pair] = out["pairs"]
    metrics = pair["metrics"]
    assert metrics["failures"]["verdict"] == "regression" and "did not finish" in metrics["failures"]["how"]
    assert metrics["kernels"]["head"] is None and metrics["kernels"]["verdict"] != "improvement"
    assert not any(m["verdict"] == "improvement" for m in metrics.values())
    assert code == 1


def test_a_base_that_did_not_finish_is_no_regression(tmp_path):
    db, healthy, killed = _warehouse(tmp_path)
    code, out = _compare(db, killed, healthy)
    [pair] = out["pairs"]
    metrics = pair["metrics"]
    assert metrics["failures"]["verdict"] == "improvement"
    assert not any(m["verdict"] == "regression" for m in metrics.values())
    assert code == 0
