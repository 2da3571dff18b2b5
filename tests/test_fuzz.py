"""The fuzzer in the suite: a fixed sample of seeded mutations of real runs (`make fuzz` runs
10,000), and the inputs that crashed the ingest before, kept as fixtures."""

from __future__ import annotations

import io

from inductor_warehouse.ingest.load import ingest_paths
from tests import fuzz
from tests.conftest import FIXTURES, reader


def test_a_fixed_sample_of_mutations_never_crashes_hangs_or_loses_a_run():
    out = io.StringIO()
    report = fuzz.run(mutations=300, seed=0, batch=25, big=False, out=out)
    assert report.tried == 300
    assert (report.crashes, report.hangs, report.lost) == ([], [], []), out.getvalue()[-3000:]
    assert report.peak_rss_mb < 1024, report.worst


def test_two_logs_under_one_manifest_once_crashed_the_ingest(tmp_path):
    """Found by the fuzzer (a copy of a run's trace log beside it): each log is a process of its
    own under the shared manifest, and its files are named relative to the manifest's folder."""
    run = FIXTURES / "broken" / "two_logs_one_manifest"
    summary = ingest_paths([run], str(tmp_path / "wh.duckdb"))
    assert summary.runs == 2 and summary.errors == 0
    with reader(str(tmp_path / "wh.duckdb")) as con:
        paths = sorted(p for (p,) in con.execute("SELECT path FROM artifacts WHERE kind = 'torch_trace'").fetchall())
    logs = sorted(f"trace/{p.name}" for p in (run / "trace").iterdir())
    assert paths == logs


def test_a_damaged_gzip_log_once_crashed_discovery_and_ingest(tmp_path):
    """Found by the fuzzer: a .log.gz whose deflate stream breaks mid-file. Its first records are
    kept, the damage is an error row, nothing escapes."""
    summary = ingest_paths([FIXTURES / "broken" / "damaged_gzip_log"], str(tmp_path / "wh.duckdb"))
    assert summary.runs == 1
    [error] = summary.error_rows
    assert error["severity"] == "error" and "the compressed log is damaged" in error["message"]
