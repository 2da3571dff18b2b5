"""A long TORCH_TRACE log is not held in memory whole: its rows are spilled while it is parsed,
and the warehouse ends up with exactly the rows of an unspilled ingest."""

from __future__ import annotations

import shutil
import tracemalloc

import duckdb
import pytest

from inductor_warehouse.ingest.assemble import assemble
from inductor_warehouse.ingest.discover import discover
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.ingest.parsers import torch_trace
from tests.conftest import reader, GPU_TRAIN_RUN

TABLES = ("graphs", "kernels", "ops", "compilations", "timings", "compile_events", "guards", "lineage")


def _long_log(folder, copies: int):
    """The fixture run's trace log repeated: the same records, a log `copies` times as long."""
    log = next((GPU_TRAIN_RUN / "trace").glob("*.log")).read_bytes()
    folder.mkdir(parents=True)
    (folder / "dedicated_log_torch_trace_long.log").write_bytes(log * copies)
    return folder


def _counts(db: str) -> dict[str, int]:
    con = reader(db)
    out = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    con.close()
    return out


def test_spilled_rows_equal_unspilled_rows(tmp_path, monkeypatch):
    src = _long_log(tmp_path / "run", copies=4)
    whole = ingest_paths([src], str(tmp_path / "whole.duckdb"))
    monkeypatch.setattr(torch_trace, "SINK_EVERY", 64 << 10)  # hand rows over every 64 KB of log
    spilled_dir = tmp_path / "again"
    shutil.copytree(src, spilled_dir)
    spilled = ingest_paths([spilled_dir], str(tmp_path / "spilled.duckdb"))
    assert _counts(str(tmp_path / "whole.duckdb")) == _counts(str(tmp_path / "spilled.duckdb"))
    assert (spilled.kernels, spilled.graphs) == (whole.kernels, whole.graphs) and whole.kernels > 0
    assert spilled.run_ids == whole.run_ids
    # the whole run's rollup is summed from its Arrow rows, the spilled one's from the tables: equal
    rollups = []
    for db in ("whole.duckdb", "spilled.duckdb"):
        con = reader(str(tmp_path / db))
        # the workload names the model, here the folder's name, which differs
        rollups.append(con.execute("SELECT * EXCLUDE (workload) FROM run_rollups").fetchall())
        con.close()
    assert rollups[0] == rollups[1] and len(rollups[0]) == 1


def _peak_parse_bytes(folder) -> int:
    run = discover([folder]).runs[0]
    tracemalloc.start()
    assemble(run, spill=lambda rows: None)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def test_parse_memory_does_not_grow_with_the_log(tmp_path, monkeypatch):
    monkeypatch.setattr(torch_trace, "SINK_EVERY", 512 << 10)
    short = _peak_parse_bytes(_long_log(tmp_path / "short", copies=2))
    long = _peak_parse_bytes(_long_log(tmp_path / "long", copies=30))
    # fifteen times the log, well under 2.5 times the memory (unspilled: over 4 times; what still
    # grows is the graphs table and the per-graph facts, which are kept to resolve later records)
    assert long < 2.5 * short, (short, long)


def test_a_failed_run_leaves_no_spill_folder(tmp_path, monkeypatch):
    import tempfile

    import pytest

    from inductor_warehouse.ingest import load

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(torch_trace, "SINK_EVERY", 64 << 10)
    src = _long_log(tmp_path / "run", copies=4)
    real = load.assemble

    def spill_then_fail(run, *a, spill=None):
        real(run, *a, spill=spill)  # spills several times on the way
        raise RuntimeError("a bug met after the rows were spilled")

    monkeypatch.setattr(load, "assemble", spill_then_fail)
    with pytest.raises(RuntimeError):
        ingest_paths([src], str(tmp_path / "wh.duckdb"))
    assert list(tmp_path.glob("iwh-spill-*")) == []


def test_a_failure_while_writing_a_long_log_leaves_nothing(tmp_path, monkeypatch):
    """The parts of a long log go in with the rest of its run, in one transaction: a failure after
    some were inserted leaves no row of the run, and the next ingest writes it whole."""
    from inductor_warehouse.ingest import write

    monkeypatch.setattr(torch_trace, "SINK_EVERY", 64 << 10)
    src = _long_log(tmp_path / "run", copies=4)
    db = str(tmp_path / "wh.duckdb")
    real = write.insert
    calls = []

    def fail_after_the_parts(con, table, tbl):
        calls.append(table)
        raise RuntimeError("the writer died after the parts were inserted")

    monkeypatch.setattr(write, "insert", fail_after_the_parts)
    with pytest.raises(RuntimeError):
        ingest_paths([src], db)
    assert calls  # it got as far as the final inserts, past the parts
    con = reader(db)
    for table in ("runs", "compilations", "timings", "ingest_errors"):
        assert con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0, table
    con.close()
    monkeypatch.setattr(write, "insert", real)
    again = ingest_paths([src], db)
    whole = ingest_paths([_long_log(tmp_path / "fresh", copies=4)], str(tmp_path / "fresh.duckdb"))
    assert again.runs == 1 and _counts(db) == _counts(str(tmp_path / "fresh.duckdb"))
    assert whole.run_ids == again.run_ids


def test_parts_an_older_version_left_are_recovered_by_the_next_ingest(tmp_path, monkeypatch):
    """Earlier versions committed a long log's parts one by one under a `_loading` marker: rows such
    a version left when it was killed are deleted by the next ingest."""
    monkeypatch.setattr(torch_trace, "SINK_EVERY", 64 << 10)
    src = _long_log(tmp_path / "run", copies=4)
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([src], db)
    clean = _counts(db)
    con = duckdb.connect(db)
    [(run_id,)] = con.execute("SELECT run_id FROM runs").fetchall()
    con.execute("DELETE FROM runs")  # what the killed writer never wrote: the run row, last
    con.execute("INSERT INTO _loading VALUES (?)", [run_id])
    con.close()
    ingest_paths([src], db)
    assert _counts(db) == clean
    con = reader(db)
    assert con.execute("SELECT count(*) FROM _loading").fetchone()[0] == 0
    con.close()
