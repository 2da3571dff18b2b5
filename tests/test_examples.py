"""Every example people read runs on the demo warehouse and answers: each `iwh` line of the README,
docs/ and the commands' --help (tests/examples.py collects them) prints rows; the answers read every
morning are the same text every run; `iwh changes --model transformer` leads with its kernel change.

The demo warehouse is what `make demo` builds (demo/build_demo.py: the bundled archives and the
captures it borrows from tests/fixtures/captures).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from tests.examples import WRITERS, command_of, in_help, in_pages, is_writer

GOLDEN = Path(__file__).parent / "golden" / "cli"
EXAMPLES = sorted({command: where for where, command in in_pages() + in_help()}.items())


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> str:
    from demo.build_demo import unpack
    from inductor_warehouse.ingest.load import ingest_paths

    root = tmp_path_factory.mktemp("demo")
    db = str(root / "warehouse.duckdb")
    summary = ingest_paths(unpack(root / "demo_corpus"), db, jobs=2)
    assert summary.errors == 0, summary.line()
    return db


def run(db: str, command: str, cwd: Path, env: dict | None = None):
    """An example as a user types it, on the demo warehouse: a `--db` it names is the demo's."""
    args = shlex.split(command)[1:]
    args = [db if i and args[i - 1] == "--db" else a for i, a in enumerate(args)]
    here = Path.cwd()
    os.chdir(cwd)  # an example's relative paths (export out/) land in the test's folder
    try:
        result = CliRunner().invoke(cli, args, env={"IWH_DB": db, "IWH_TABLE_WIDTH": None, **(env or {})})
    finally:
        os.chdir(here)
    out = cwd / "out"
    written = {p.name: p.read_text() for p in out.glob("*.csv")} if out.is_dir() else {}
    parquet = list(out.glob("*.parquet")) if out.is_dir() else []
    return result, written, parquet


def test_the_examples_are_found():
    commands = [c for c, _ in EXAMPLES]
    assert len(commands) > 40
    assert "iwh changes --model transformer" in commands and any(c.startswith("iwh query harness/") for c in commands)
    # the writers and servers are named by command; every other example is run below
    assert {command_of(c) for c in commands if is_writer(c)} <= WRITERS
    assert {command_of(c) for c in commands if not is_writer(c)} >= {"runs", "queries", "query", "sql", "compare",
                                                                    "changes", "export"}


@pytest.mark.parametrize("command", [c for c, _ in EXAMPLES if not is_writer(c)], ids=lambda c: c[:90])
def test_every_example_prints_rows(demo, tmp_path, command):
    result, written, parquet = run(demo, command, tmp_path)
    gate = "--fail-on" in command
    assert result.exit_code in ((0, 1) if gate else (0,)), (dict(EXAMPLES)[command], result.output[-2000:])
    out = result.stdout
    if " export " in f" {command} ":
        assert parquet or (written and all(len(text.splitlines()) >= 2 for text in written.values())), out
        return
    assert out.strip() and "(no rows)" not in out, out
    if "--format json" in command:
        assert json.loads(out)
    elif "--format csv" in command:
        assert len(out.strip().splitlines()) >= 2, out
    elif "--show-sql" not in command and "--format markdown" not in command:
        assert len([line for line in out.splitlines() if line.strip()]) >= 3, out


def test_changes_of_transformer_lead_with_the_kernel_count(demo, tmp_path, request):
    """The demo's transformer changed its kernels between 2.6.0 and 2.13 (14 -> 10): the first row."""
    result, _, _ = run(demo, "iwh changes --model transformer", tmp_path, {"IWH_TABLE_WIDTH": "160"})
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    rule = next(i for i, line in enumerate(lines) if line and set(line) <= {"-", " "})
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[rule])]
    names = " ".join(lines[:rule]).split()
    cells = {name: spans[i] for i, name in enumerate(["series", "position", "before", "after", "metric"])}
    assert names[:2] == ["series", "position"]
    # a row starts where its position (a number: never wrapped) is; its wrapped cells continue below
    body = lines[rule + 1:]
    starts = [i for i, line in enumerate(body) if line[slice(*cells["position"])].strip()]
    rows = [body[i:j] for i, j in zip(starts, [*starts[1:], len(body)], strict=True)]
    assert 0 < len(rows) < 15
    first = {name: " ".join(p for line in rows[0] if (p := line[slice(*span)].strip())) for name, span in cells.items()}
    assert first == {"series": "transformer [device=cpu]", "position": "2", "before": "2.6.0+cu124",
                     "after": "2.13.0+cpu", "metric": "kernels"}
    values = rows[0][0][cells["metric"][1]:].split()
    assert values[:2] == ["14", "10"]
    golden = GOLDEN / "changes_transformer.txt"
    if request.config.getoption("--update-golden"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(result.stdout)
    assert result.stdout == golden.read_text()


COMPARES = ["iwh compare --base compiler=2.13 --head compiler=2.14.1",
            "iwh compare --base compiler=2.6.0 --head compiler=2.13.0 --model transformer --kernels --show-code",
            "iwh compare --base variant=default --head variant=single_config --model mobilenetv2_100 --kernels"]


def in_a_process(db: str, command: str, seed: int) -> subprocess.CompletedProcess:
    """The command in a process of its own, with its own hash seed: a set's order differs between
    processes, never within one."""
    env = {**os.environ, "IWH_DB": db, "PYTHONHASHSEED": str(seed)}
    env.pop("IWH_TABLE_WIDTH", None)
    return subprocess.run([sys.executable, "-m", "inductor_warehouse", *shlex.split(command)[1:]],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "markdown"])
@pytest.mark.parametrize("command", COMPARES, ids=lambda c: c[12:60])
def test_two_runs_of_a_compare_are_byte_identical(demo, command, fmt):
    first, second = (in_a_process(demo, f"{command} --format {fmt}", seed) for seed in (1, 2))
    assert first.returncode == second.returncode == 0, first.stderr[-1000:]
    assert first.stdout == second.stdout and first.stderr == second.stderr and len(first.stdout) > 200


@pytest.mark.parametrize("command", ["iwh changes --model transformer --all --format json",
                                     "iwh changes --model mobilenetv2_100 --all",
                                     "iwh query graph_breaks/top_reasons --format csv"])
def test_two_runs_of_changes_and_queries_are_byte_identical(demo, command):
    first, second = (in_a_process(demo, command, seed) for seed in (3, 4))
    assert first.returncode == 0 and (first.stdout, first.stderr) == (second.stdout, second.stderr)
