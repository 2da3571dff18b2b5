"""One convention for options: `--db` and `--format` go before or after the command, on every
command, and every command's help shows an example."""

from __future__ import annotations

import csv
import io
import json
import sys

import pytest
from click.testing import CliRunner

from inductor_warehouse.cli.main import all_commands, cli
from tests.conftest import reader, FIXTURES

RUN = FIXTURES / "runs" / "cpu-torch2.13" / "transformer"


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    """A warehouse holding one run, made with `--db` after the command."""
    path = str(tmp_path_factory.mktemp("opts") / "elsewhere.duckdb")
    res = CliRunner().invoke(cli, ["ingest", str(RUN), "--db", path])
    assert res.exit_code == 0, res.output
    return path


@pytest.fixture(autouse=True)
def away_from_defaults(tmp_path, monkeypatch):
    """No ./warehouse.duckdb and no $IWH_DB: a command that ignored --db would fail or write here."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("IWH_DB", raising=False)


def invocations(db: str, tmp) -> dict[str, list[str]]:
    """For every command, a call with `--db` after the command name."""
    return {
        "ingest": ["ingest", str(RUN), "--db", db],
        "migrate": ["migrate", "--db", db],
        "runs": ["runs", "--db", db],
        "sql": ["sql", "SELECT count(*) AS n FROM runs", "--db", db],
        "queries": ["queries", "--db", db],
        "query": ["query", "overview/runs", "--db", db],
        "export": ["export", str(tmp / "out"), "--table", "runs", "--db", db],
        "compare": ["compare", "--base", "compiler=2.13", "--head", "compiler=2.13.0", "--db", db],
        "capture": ["capture", "--out", str(tmp / "cap"), "--model", "noop", "--db", db, "--", sys.executable, "-c", "0"],
        "dashboard": ["dashboard", "--db", str(tmp / "missing.duckdb")],
        "copy": ["copy", str(tmp / "copied.duckdb"), "--db", db],
        "changes": ["changes", "--model", "transformer", "--db", db],
        "vacuum": ["vacuum", "--db", db],
    }


def test_every_command_takes_db_after_it(db, tmp_path):
    calls = invocations(db, tmp_path)
    assert sorted(calls) == sorted(c.name for c in all_commands()), "a new command needs a case here"
    for name, args in calls.items():
        res = CliRunner().invoke(cli, args)
        if name == "dashboard":
            # refuses a missing warehouse by its name, without starting a server
            assert res.exit_code == 1 and "missing.duckdb" in res.output, res.output
            continue
        if name == "vacuum":  # a file has nothing to tidy: it says so about this file
            assert res.exit_code == 1 and f"{db} is a file" in res.output, res.output
            continue
        assert res.exit_code == 0, (name, res.output)
    assert not (tmp_path / "warehouse.duckdb").exists()
    con = reader(db)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 2  # the transformer run and the capture
    con.close()
    assert (tmp_path / "out" / "runs.parquet").exists()
    with reader(str(tmp_path / "copied.duckdb")) as copied:
        assert copied.execute("SELECT count(*) FROM runs").fetchone()[0] == 2  # copied after the capture


def test_db_and_format_before_or_after_the_command(db):
    before = CliRunner().invoke(cli, ["--db", db, "--format", "json", "runs"])
    after = CliRunner().invoke(cli, ["runs", "--format", "json", "--db", db])
    assert before.exit_code == after.exit_code == 0
    assert json.loads(before.output) == json.loads(after.output)
    con = reader(db)
    models = sorted(m for (m,) in con.execute("SELECT model FROM runs").fetchall())
    con.close()
    assert sorted(r["model"] for r in json.loads(after.output)) == models and "transformer" in models
    # the one after the command wins
    mixed = CliRunner().invoke(cli, ["--format", "json", "sql", "SELECT 1 AS one", "--format", "csv", "--db", db])
    assert list(csv.DictReader(io.StringIO(mixed.output))) == [{"one": "1"}]
    wrong = CliRunner().invoke(cli, ["--format", "markdown", "runs", "--db", db])
    assert wrong.exit_code == 2 and "markdown" in wrong.output


def test_ingest_prints_its_summary_as_json_for_scripts(tmp_path):
    res = CliRunner().invoke(cli, ["ingest", str(RUN), "--db", str(tmp_path / "w.duckdb"), "--format", "json"])
    summary = json.loads(res.output)
    assert (summary["runs"], summary["errors"], len(summary["run_ids"])) == (1, 0, 1)


def test_every_help_shows_an_example():
    assert "Examples:" in CliRunner().invoke(cli, ["--help"]).output
    for command in all_commands():
        out = CliRunner().invoke(cli, [command.name, "--help"]).output
        assert "Example" in out and f"iwh {command.name}" in out, command.name
        assert "--db" in out, command.name
