"""A long TORCH_TRACE log is not held in memory whole: its rows are spilled while it is parsed,
and the warehouse ends up with exactly the rows of an unspilled ingest."""

from __future__ import annotations

import shutil
import tracemalloc


from ingest.assemble import assemble
from ingest.discover import discover
from ingest.load import ingest_paths
from ingest.parsers import torch_trace
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

    from ingest import load

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


def test_a_crash_while_writing_parts_is_recovered_by_the_next_ingest(tmp_path, monkeypatch):
    import pytest

    from ingest import load

    monkeypatch.setattr(torch_trace, "SINK_EVERY", 64 << 10)
    src = _long_log(tmp_path / "run", copies=4)
    db = str(tmp_path / "wh.duckdb")
    real = load._insert

    def crash_in_the_final_transaction(con, table, tbl):
        raise RuntimeError("killed after the parts were committed")

    monkeypatch.setattr(load, "_insert", crash_in_the_final_transaction)
    with pytest.raises(RuntimeError):
        ingest_paths([src], db)
    con = reader(db)
    # the parts were committed, the run row never was: the marker says whose rows they are
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM _loading").fetchone()[0] == 1
    assert con.execute("SELECT count(*) FROM compilations").fetchone()[0] > 0
    con.close()
    monkeypatch.setattr(load, "_insert", real)
    again = ingest_paths([src], db)
    whole = ingest_paths([_long_log(tmp_path / "fresh", copies=4)], str(tmp_path / "fresh.duckdb"))
    assert again.runs == 1 and _counts(db) == _counts(str(tmp_path / "fresh.duckdb"))
    con = reader(db)
    assert con.execute("SELECT count(*) FROM _loading").fetchone()[0] == 0
    orphans = con.execute("SELECT count(*) FROM compilations WHERE run_id NOT IN (SELECT run_id FROM runs)")
    assert orphans.fetchone()[0] == 0 and whole.run_ids == again.run_ids
    con.close()
