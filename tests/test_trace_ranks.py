"""The rank of a TORCH_TRACE log whose file name and records disagree.

torch names a distributed process's log `dedicated_log_torch_trace_rank_<N>_<random>.log` from
dist.get_rank() when it opens it, and writes the same rank in every record's envelope
(torch/_logging/_internal.py, 2.3 to 2.14), so a torchrun log never disagrees. tlparse's test input
multi_rank_schedule/..._rank_1_n8zycf07.log (tests/fixtures/trace_ranks, SOURCES.md) was made by hand
from rank 0's: its records say rank 0. tlparse ranks logs by their file name (its --all-ranks-html),
and so does the warehouse, with a warning naming both.
"""

from __future__ import annotations

import gzip
import re
import shutil

from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

LOG = FIXTURES / "trace_ranks" / "multi_rank_schedule" / "dedicated_log_torch_trace_rank_1_n8zycf07.log.gz"


def test_the_file_names_rank_wins_with_a_warning(tmp_path):
    text = gzip.decompress(LOG.read_bytes()).decode()
    said = set(re.findall(r'^\S+ \S+ \d+ \S+\] \{.*"rank": (\d+)', text, re.M))
    assert said == {"0"}  # every record's envelope
    (tmp_path / "job").mkdir()
    shutil.copy(LOG, tmp_path / "job" / LOG.name)
    # the same bytes under the name torch would give them: nothing to settle
    shutil.copy(LOG, tmp_path / "job" / "dedicated_log_torch_trace_rank_0_x1y2z3ab.log.gz")
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([tmp_path / "job"], db)
    with reader(db) as con:
        ranks = dict(con.execute("SELECT regexp_extract(source_path, 'rank_([0-9]+)_', 1), rank FROM runs").fetchall())
        warnings = con.execute("SELECT path, message FROM ingest_errors WHERE severity = 'warning' "
                               "AND message LIKE '%file name%'").fetchall()
    assert ranks == {"1": 1, "0": 0}
    [(path, message)] = warnings
    assert path.endswith(LOG.name) and "records say rank 0" in message and "file name says rank 1" in message
