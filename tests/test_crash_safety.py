"""`kill -9` of an ingest at any moment, then a re-ingest, gives the tables a clean ingest gives:
no run half-written, none doubled, none lost. Kills land at spread moments of an ingest that
commits one run at a time (tests.ingest_driver slow), so some fall inside commits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import ROOT, unpack_cpu_corpora
from tests.test_team_warehouse import contents, machine

# seconds after the first commit (None: before it, while the first runs are parsed); the writer
# commits one run every ~0.3 s plus the commit's own time, so these fall before, in and between commits
KILL_AFTER_S = (None, 0.0, 0.15, 0.3, 0.7, 1.5)


def test_kill_9_at_six_moments_then_reingest_equals_a_clean_ingest(tmp_path):
    corpora = unpack_cpu_corpora(tmp_path / "corpora")
    clean = str(tmp_path / "clean.duckdb")
    ingest_paths(corpora, clean)
    want = contents(clean)
    db = str(tmp_path / "killed.duckdb")
    landed = []
    for i, after in enumerate(KILL_AFTER_S):
        flag = tmp_path / f"flag{i}"
        proc = subprocess.Popen([sys.executable, "-m", "tests.ingest_driver", "slow", str(flag), "--", "ingest",
                                 *map(str, corpora), "--db", db, "--force"], cwd=ROOT, env=machine(tmp_path, str(i)),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if after is None:
            time.sleep(0.3)
        else:
            deadline = time.time() + 120
            while not flag.exists() and proc.poll() is None and time.time() < deadline:
                time.sleep(0.01)
            time.sleep(after)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        if os.path.exists(db):
            # what a reader finds after the kill: whole runs only
            got = contents(db, ["runs", "graphs", "kernels"])
            runs = {r[0] for r in got["runs"]}
            assert {g[0] for g in got["graphs"]} <= runs and {k[0] for k in got["kernels"]} <= runs
            landed.append(len(runs))
        summary = ingest_paths(corpora, db, wait=60)  # the re-ingest
        assert summary.errors == 0
        assert contents(db) == want, f"after a kill {after} s after the first commit"
    assert landed and max(landed) > 0  # some kills fell after commits, not all before the first
