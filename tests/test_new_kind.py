"""architecture.md's recipe for a new artifact kind, followed: a parser module and one entry in the
register of sources (ingest/sources.py), nothing else, and its files land as artifacts of their
kind and rows of the tables the entry names, beside the run's other rows.

The toy kind is a stopwatch: a TSV whose first line is `stopwatch`, then `name<TAB>microseconds`
lines, read into `timings`."""

from __future__ import annotations

import shutil
import sys
import types

import duckdb
import pytest
from tests.conftest import FIXTURES

from inductor_warehouse.ingest import sources
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.ingest.rows import Parsed

STOPWATCH = "stopwatch\ncompile_fx\t1250.5\nbad line\nautotune\t80\n"


def _stopwatch_parser() -> types.ModuleType:
    """ingest/parsers/stopwatch.py, as a contributor would write it: pure, bytes -> Parsed."""
    module = types.ModuleType("inductor_warehouse.ingest.parsers.stopwatch")

    def is_stopwatch(head: bytes) -> bool:
        return head.startswith(b"stopwatch\n")

    def parse_stopwatch(data: bytes) -> Parsed:
        parsed = Parsed()
        for lineno, line in enumerate(data.decode().splitlines()[1:], 2):
            name, _, us = line.partition("\t")
            try:
                parsed.add("timings", {"kind": "compile", "name": name, "duration_us": float(us), "calls": 1,
                                       "source": "stopwatch"})
            except ValueError:
                parsed.problem(f"not `name<TAB>microseconds`: {line!r}", lineno, "warning")
        return parsed

    module.is_stopwatch, module.parse_stopwatch = is_stopwatch, parse_stopwatch  # type: ignore[attr-defined]
    return module


@pytest.fixture
def stopwatch(monkeypatch):
    parser = _stopwatch_parser()
    monkeypatch.setitem(sys.modules, parser.__name__, parser)
    entry = sources.Source(parser, sources.RUN, frozenset({"timings"}), sources.read_each(parser.parse_stopwatch),
                           sniff=lambda name, head: {} if name.endswith(".tsv") and parser.is_stopwatch(head) else None)
    monkeypatch.setattr(sources, "SOURCES", (*sources.SOURCES, entry))
    return entry


def test_a_new_kind_lands_through_one_register_entry(stopwatch, tmp_path):
    run = tmp_path / "transformer"
    shutil.copytree(FIXTURES / "runs" / "cpu-torch2.13" / "transformer", run)
    (run / "compile_times.tsv").write_text(STOPWATCH)
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([run], db)
    con = duckdb.connect(db, read_only=True)
    assert stopwatch.kind == "stopwatch"
    assert con.execute("SELECT path, kind FROM artifacts WHERE kind = 'stopwatch'").fetchall() == [
        ("compile_times.tsv", "stopwatch")]
    assert con.execute("SELECT name, duration_us, calls FROM timings WHERE source = 'stopwatch' ORDER BY name"
                       ).fetchall() == [("autotune", 80.0, 1), ("compile_fx", 1250.5, 1)]
    # its problems are the run's errors, named by its kind and line
    assert con.execute("SELECT path, kind, line, severity FROM ingest_errors").fetchall() == [
        ("compile_times.tsv", "stopwatch", 3, "warning")]
    # and the run's other sources are read as before: the debug tree's graphs, the trace's compilations
    assert con.execute("SELECT count(*) FROM graphs").fetchone()[0] > 0
    assert con.execute("SELECT count(*) FROM compilations").fetchone()[0] > 0
    con.close()


def test_without_its_entry_the_file_is_not_read(tmp_path):
    """The same file with no entry: skipped as unrecognised, no row anywhere (the register is the
    only place that makes a kind)."""
    run = tmp_path / "transformer"
    shutil.copytree(FIXTURES / "runs" / "cpu-torch2.13" / "transformer", run)
    (run / "compile_times.tsv").write_text(STOPWATCH)
    db = str(tmp_path / "wh.duckdb")
    summary = ingest_paths([run], db)
    con = duckdb.connect(db, read_only=True)
    assert con.execute("SELECT count(*) FROM artifacts WHERE path = 'compile_times.tsv'").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM timings WHERE source = 'stopwatch'").fetchone()[0] == 0
    con.close()
    assert summary.skipped_files["unrecognised file"] >= 1
