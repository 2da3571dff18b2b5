"""A side (or a point) with some runs that did not finish: an unfinished run is a failures sample of the
worst value, so by a count's lower median the side fails only where more than half its runs did not
finish; its finished runs are its samples everywhere (compare, `iwh changes`, the canned queries), and
the runs left out are named. A cache state nothing was read of is unknown, never `off`. On real captures
of torch 2.5.1 gbreak_dyn with a warm cache (tests/fixtures/SOURCES.md): two finished warm runs, one
killed after three FX lookups, one killed before any. Each value is read here from the files alone."""

from __future__ import annotations

import json
import re
import tarfile

import pytest
from click.testing import CliRunner

from inductor_warehouse.analysis.changes import changes
from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

ARCHIVE = FIXTURES / "unfinished" / "cpu-torch2.5.1-warm-killed.tar.xz"
FINISHED_A, FINISHED_B, KILLED, KILLED_EARLY = ("gbreak_dyn-warm", "gbreak_dyn-warm3", "gbreak_dyn-warmkill",
                                                "gbreak_dyn-warmkill-too-early")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("unfinished")
    with tarfile.open(ARCHIVE) as tar:
        tar.extractall(root, filter="data")
    return root / "2.5.1"


def _fx(run):
    """(lookups, hits) of the FX graph cache, from the run's trace alone: 2.5 logs a lookup as an
    `fx_graph_cache_hash` artifact whose payload line (tab-indented, after its header) says cache_state."""
    lookups = hits = 0
    for log in (run / "trace").iterdir():
        lines = log.read_text().splitlines()
        for i, line in enumerate(lines):
            if '"name": "fx_graph_cache_hash"' in line:
                lookups += 1
                hits += json.loads(lines[i + 1].strip()).get("cache_state") == "hit"
    return lookups, hits


def _manifest(run):
    return json.loads((run / "manifest.json").read_text())


def _ingest(tmp_path, runs, sides):
    db = str(tmp_path / "w.duckdb")
    for side, names in sides.items():
        ingest_paths([runs / n for n in names], db, labels={"side": side})
    return db


def _compare(db, base="side=a", head="side=b"):
    res = CliRunner().invoke(cli, ["compare", "--base", base, "--head", head, "--db", db, "--fail-on", "regression"])
    return res.exit_code, res.output


def test_the_files_are_what_the_tests_say(runs):
    assert _manifest(runs / KILLED)["timed_out"] is True and _manifest(runs / KILLED)["exit_code"] == 124
    assert _manifest(runs / KILLED_EARLY)["timed_out"] is True
    assert "timed_out" not in _manifest(runs / FINISHED_B) and _manifest(runs / FINISHED_B)["exit_code"] == 0
    assert _fx(runs / FINISHED_A) == (7, 7) and _fx(runs / FINISHED_B) == (7, 7)
    assert _fx(runs / KILLED) == (3, 3) and _fx(runs / KILLED_EARLY) == (0, 0)


def test_a_killed_retry_beside_a_finished_run_passes_the_gate_and_is_named(tmp_path, runs):
    db = _ingest(tmp_path, runs, {"a": [FINISHED_A], "b": [FINISHED_B, KILLED]})
    code, out = _compare(db)
    assert code == 0, out
    assert "regression" not in out.split("summary")[0]
    assert "head 1 of 2 runs did not finish (timed out (exit 124))" in out
    with reader(db) as con:
        report = changes(con, "gbreak_dyn", "side")
    assert not [c for p in report.points for c in p.changes if c.metric == "failures"]
    assert any("1 of 2 runs did not finish" in n for n in report.notes)


def test_a_side_most_of_whose_runs_did_not_finish_fails_and_shows_the_row(tmp_path, runs):
    db = _ingest(tmp_path, runs, {"a": [FINISHED_A], "b": [FINISHED_B, KILLED, KILLED_EARLY]})
    code, out = _compare(db)
    assert code == 1
    # the row that carries the verdict is shown, with its reason, though both sides count 0 failures
    row = next(line for line in out.splitlines() if re.match(r"gbreak_dyn\s+failures\s", line))
    assert "regression" in row and "2 of 3 runs did not finish" in row
    with reader(db) as con:
        report = changes(con, "gbreak_dyn", "side")
    [failed] = [c for p in report.points for c in p.changes if c.metric == "failures"]
    assert "2 of 3 runs did not finish" in failed.detail


def test_the_hit_rate_query_pools_the_runs_compare_pools(tmp_path, runs):
    db = _ingest(tmp_path, runs, {"b": [FINISHED_A, FINISHED_B, KILLED, KILLED_EARLY]})
    lookups = sum(_fx(runs / n)[0] for n in (FINISHED_A, FINISHED_B))
    hits = sum(_fx(runs / n)[1] for n in (FINISHED_A, FINISHED_B))
    res = CliRunner().invoke(cli, ["query", "cache/hit_rate_by_model_version", "--db", db, "--format", "json"])
    [row] = json.JSONDecoder().raw_decode(res.output)[0]
    assert (row["runs"], row["fx_lookups"], row["fx_hits"], row["runs_caches_off"]) == (2, lookups, hits, 0)
    res = CliRunner().invoke(cli, ["compare", "--base", "side=b", "--head", "side=b,compiler=2.5", "--db", db,
                                   "--format", "json"])
    if res.exit_code == 0:  # the same runs under a second selector: compare's pooled rate is the query's
        [pair] = json.JSONDecoder().raw_decode(res.output)[0]["pairs"]
        assert pair["metrics"]["fx_cache_hit_rate"]["base"] == pytest.approx(hits / lookups)


def test_a_run_killed_before_any_lookup_has_an_unknown_cache_state(tmp_path, runs):
    db = _ingest(tmp_path, runs, {"b": [KILLED_EARLY]})
    assert _manifest(runs / KILLED_EARLY)["caches"] == "on"
    with reader(db) as con:
        row = con.execute("SELECT fx_lookups, cache_temperature FROM run_cache").fetchone()
    assert row == (None, None)
