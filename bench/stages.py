"""Where an ingest's CPU goes, stage by stage: the profile docs/performance.md gives.

    python -m bench.stages trace     # the 67 GPU runs' TORCH_TRACE logs alone (bench's trace section)
    python -m bench.stages full      # the 67 GPU runs whole (bench's ingest section)
    python -m bench.stages DIR ...   # any runs

Every stage of `iwh ingest` runs in this one process, one after the other, each timed by the CPU
seconds it takes (user + system, DuckDB's threads included): on a shared machine CPU time varies
far less than wall time. The stages are those of an ingest with parse workers:
- parse: reading and hashing the files, the TORCH_TRACE framing (records cut out, envelopes
  decoded, payloads checked against their md5), the trace readers, the other parsers and the
  assembly of the run, and its conversion to Arrow;
- hand-over: a run's result written to a file and read back, as a parse worker and the writer do;
- write: the warehouse made, the batches' inserts, commits, rollups and the rest of their
  transaction, and the closing checkpoint.
What a `--jobs 2` ingest adds (its workers' start, Python's imports) is not here.
"""

from __future__ import annotations

import os
import pickle
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

from bench import corpus

CLOCK = time.process_time


class Stages:
    """CPU seconds by stage; a nested stage's time is taken out of the stage around it."""

    def __init__(self):
        self.cpu: Counter = Counter()
        self.stack: list[list] = []

    @contextmanager
    def stage(self, name: str):
        frame = [name, CLOCK(), 0.0]  # name, start, time of the stages nested in it
        self.stack.append(frame)
        try:
            yield
        finally:
            self.stack.pop()
            spent = CLOCK() - frame[1]
            self.cpu[name] += spent - frame[2]
            if self.stack:
                self.stack[-1][2] += spent

    def wrap(self, owner, attr: str, name: str) -> None:
        fn = getattr(owner, attr)

        def timed(*args, **kwargs):
            with self.stage(name):
                return fn(*args, **kwargs)

        setattr(owner, attr, timed)


def profile(paths: list[Path]) -> tuple[Counter, float]:
    from inductor_warehouse.cli.lean import lean_imports

    lean_imports()  # as the command line runs: no pandas, no numpy
    from inductor_warehouse.ingest import load, reading, spill, write
    from inductor_warehouse.ingest.convert import Columns
    from inductor_warehouse.ingest.parsers import torch_trace
    from inductor_warehouse.ingest.remote import discover_anywhere
    from inductor_warehouse.store import connection
    from inductor_warehouse.store.writer import Writer

    s = Stages()
    s.wrap(reading._HashingFile, "read", "parse: read and hash the files")
    s.wrap(reading.Reader, "read", "parse: read and hash the files")
    s.wrap(torch_trace, "parse_torch_trace_chunks", "parse: TORCH_TRACE framing")
    s.wrap(torch_trace.TraceState, "record", "parse: trace readers")
    s.wrap(torch_trace.TraceState, "close", "parse: trace readers")
    s.wrap(load, "assemble", "parse: other parsers, assembly")
    s.wrap(load, "loaded", "parse: conversion to Arrow")
    s.wrap(spill.Spill, "__call__", "parse: conversion to Arrow")
    s.wrap(write, "insert", "write: inserts")
    s.wrap(write, "fill_rollups", "write: rollups")
    s.wrap(connection, "rollback", "write: transaction, other")

    runs = discover_anywhere(paths).runs
    folder = tempfile.mkdtemp(prefix="iwh-stages-")
    db = os.path.join(folder, "wh.duckdb")
    total = CLOCK()
    with s.stage("write: make and open the warehouse"):
        writer = Writer(db)
        with writer.session() as con:
            columns = Columns(con)
    now = "2026-01-01T00:00:00"
    batch: list = []

    def commit(batch, threads):
        with s.stage("write: transaction, other"):
            write.commit(writer, columns, batch, threads, now)

    # commits: the transaction's COMMIT, timed apart from the statements before it
    real_transaction = write.transaction

    @contextmanager
    def transaction(con):
        with real_transaction(_Committing(con, s)) as c:
            yield c

    write.transaction = transaction
    try:
        for run in runs:
            data = load._parse_one((run, (columns, None, None, now)))
            with s.stage("hand-over: result file written and read"):
                path = os.path.join(folder, "result")
                with open(path, "wb") as fh:
                    pickle.dump((True, data), fh, protocol=pickle.HIGHEST_PROTOCOL)
                with open(path, "rb") as fh:
                    data = pickle.load(fh)[1]
                os.unlink(path)
            batch.append(data)
            if len(batch) >= load.BATCH_RUNS or sum(d.bytes_read for d in batch) >= load.BATCH_BYTES:
                commit(batch, 1)  # as `--jobs 2` does while its workers parse
                batch = []
        if batch:
            commit(batch, 0)
        with s.stage("write: closing checkpoint"):
            writer.close()
    finally:
        write.transaction = real_transaction
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    return s.cpu, CLOCK() - total


class _Committing:
    """A connection whose COMMIT is timed as a stage of its own."""

    def __init__(self, con, stages: Stages):
        self._con, self._stages = con, stages

    def execute(self, sql, *args):
        if sql == "COMMIT":
            with self._stages.stage("write: commits"):
                return self._con.execute(sql, *args)
        return self._con.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._con, name)


def main(argv: list[str]) -> None:
    what = argv[0] if argv else "trace"
    paths = ([corpus.trace_folder()] if what == "trace" else [corpus.gpu_runs()] if what == "full"
             else [Path(a) for a in argv])
    cpu, total = profile(paths)
    print(f"{'stage':45s} {'CPU s':>7s} {'share':>6s}")
    for group in ("parse", "hand-over", "write"):
        part = {k: v for k, v in cpu.items() if k.startswith(group)}
        for name, v in sorted(part.items()):
            print(f"{name:45s} {v:7.3f} {100 * v / total:5.1f}%")
        print(f"{group + ', all':45s} {sum(part.values()):7.3f} {100 * sum(part.values()) / total:5.1f}%")
    print(f"{'whole':45s} {total:7.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
