"""What an ingest did, as it counts it (`IngestSummary`), and a progress bar while it runs.

The summary counts what is stored: a run this ingest wrote and a later run of it replaced counts
once, and a run the warehouse refused not at all.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from typing import Any
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

import orjson

from inductor_warehouse.ingest.convert import Loaded
from inductor_warehouse.ingest.copies import StoredCopy
from inductor_warehouse.ingest.listing import Skipped
from inductor_warehouse.schema.words import plural


@dataclass
class IngestSummary:
    runs: int = 0
    skipped_runs: int = 0
    refused: int = 0  # runs the warehouse would not take (counted in errors too)
    failed: int = 0  # runs whose parse (or fetch) failed, none of their rows written (counted in errors too)
    graphs: int = 0
    kernels: int = 0
    kernels_unknown: int = 0  # runs whose kernel count is unknown (NULL in run_metrics), not 0
    errors: int = 0
    bytes: int = 0
    seconds: float = 0.0
    skipped_files: Skipped = field(default_factory=Skipped)  # files not read: a count by reason, and which
    counters: Counter[str] = field(default_factory=Counter)
    missing: list[str] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    error_rows: list[dict[str, Any]] = field(default_factory=list)  # ingest_errors rows, with their run's source path
    replaced: int = 0  # runs of this ingest stored once with another of the same files (a later one, a copy)
    copies: list[StoredCopy] = field(default_factory=list)  # runs left out: a stored run's files under other names
    # unchanged runs (skipped unread) stored under other names than this ingest gives them
    renamed_unchanged: list[StoredCopy] = field(default_factory=list)
    # ("path", source path) and ("id", run id) -> the run of this ingest written under them
    written: dict[tuple[str, str], Loaded] = field(default_factory=dict, repr=False)

    def line(self) -> str:
        mb = self.bytes / 1e6
        rate = mb / self.seconds if self.seconds > 0 else 0.0
        renamed = f" ({len(self.renamed_unchanged):,} stored with other names than given)" if self.renamed_unchanged else ""
        notes = ([f"{self.skipped_runs:,} unchanged, skipped{renamed}"] if self.skipped_runs else []) + \
            ([f"{self.refused:,} refused by the warehouse"] if self.refused else []) + \
            ([f"{self.failed:,} failed to parse"] if self.failed else []) + \
            ([f"{self.replaced:,} the same files as another run, stored once"] if self.replaced else []) + \
            ([f"{len(self.copies):,} the same files as a stored run named otherwise, not stored"] if self.copies else [])
        skipped = f" ({'; '.join(notes)})" if notes else ""
        warned = f" and {plural(self.warnings, 'warning')}" if self.warnings else ""
        return (
            f"ingested {plural(self.runs, 'run')}{skipped}, {plural(self.graphs, 'graph')}, "
            f"{self._kernels()}, {plural(self.errors - self.warnings, 'error')}{warned} in "
            f"{self.seconds:.2f} s ({mb:.1f} MB, {rate:.1f} MB/s)"
        )

    def _kernels(self) -> str:
        """The kernel count, saying where runs did not tell theirs: an unknown is no 0."""
        if self.kernels_unknown and self.kernels_unknown == self.runs and not self.kernels:
            return "kernels unknown"
        if self.kernels_unknown:
            return f"{plural(self.kernels, 'kernel')} (unknown for {plural(self.kernels_unknown, 'run')})"
        return plural(self.kernels, "kernel")

    @property
    def warnings(self) -> int:
        """How many of the ingest_errors rows counted in `errors` are warnings (the data kept, a doubt said)."""
        return sum(1 for e in self.error_rows if e.get("severity") == "warning")

    def unknown_records(self) -> dict[str, int]:
        """Trace records the record table does not know, by `kind` or `kind name` (ingest/parsers/trace_records.py)."""
        out = {}
        for key, n in self.counters.items():
            if key.startswith("unknown_"):
                kind, _, name = key[len("unknown_"):].partition(":")
                out[name if kind == "kind" else f"{kind} {name}"] = n
        return out

    def json(self) -> str:
        """The summary for scripts (`iwh ingest --format json`): counts, the run ids, every error."""
        return orjson.dumps({
            "runs": self.runs, "skipped_runs": self.skipped_runs, "refused_runs": self.refused,
            "failed_runs": self.failed, "replaced_runs": self.replaced,
            "copies_not_stored": [dataclasses.asdict(c) for c in self.copies],
            "unchanged_named_otherwise": [dataclasses.asdict(c) for c in self.renamed_unchanged],
            "graphs": self.graphs, "kernels": self.kernels,
            "errors": self.errors, "warnings": self.warnings, "bytes": self.bytes, "seconds": round(self.seconds, 3),
            "skipped_files": dict(self.skipped_files), "skipped_paths": self.skipped_files.paths,
            "missing": self.missing, "run_ids": self.run_ids,
            "error_rows": self.error_rows, "unknown_records": self.unknown_records(),
        }, default=str, option=orjson.OPT_INDENT_2).decode()

    def tally(self, data: Loaded) -> None:
        """A run handed to the writer. One that replaces a run this ingest wrote (the same source
        path or run id: a copy of a run beside itself) leaves one run stored, and so one counted."""
        keys = _keys(data)
        earlier = next((self.written[k] for k in keys if k in self.written), None)
        if earlier is not None:
            self._forget(earlier)
            self.replaced += 1
        for k in keys:
            self.written[k] = data
        self.runs += 1
        self.run_ids.append(data.run["run_id"])
        self.graphs += data.graphs
        self.kernels += data.kernels
        self.errors += len(data.errors)
        self.error_rows.extend(_error_row(e, data) for e in data.errors)
        self.bytes += data.bytes_read
        self.counters.update(data.counters)

    def refuse(self, data: Loaded, row: Mapping[str, Any]) -> None:
        """A tallied run the warehouse refused, `row` the error written in its place."""
        self._uncount(data)
        for k in _keys(data):
            if self.written.get(k) is data:
                del self.written[k]
        self.refused += 1
        self._error(row, data.run["source_path"])

    def leave_out(self, data: Loaded, copy: StoredCopy) -> None:
        """A tallied run left out: a copy of a stored run under other names (ingest/copies.py)."""
        self._forget(data)
        self.copies.append(copy)

    def _forget(self, data: Loaded) -> None:
        """A tallied run that is not stored after all: neither it, its errors nor its counters count."""
        self._uncount(data)
        self.errors -= len(data.errors)
        for e in data.errors:
            self.error_rows.remove(_error_row(e, data))
        self.counters -= data.counters
        for k in _keys(data):
            if self.written.get(k) is data:
                del self.written[k]

    def fail(self, source_path: str, row: Mapping[str, Any]) -> None:
        """A run whose parse failed, `row` the error written in its place."""
        self.failed += 1
        self._error(row, source_path)

    def _uncount(self, data: Loaded) -> None:
        self.runs -= 1
        self.graphs -= data.graphs
        self.kernels -= data.kernels
        self.run_ids.remove(data.run["run_id"])

    def _error(self, row: Mapping[str, Any], source_path: str) -> None:
        self.errors += 1
        self.error_rows.append(dict(row, source_path=source_path))


def _error_row(e: Mapping[str, Any], data: Loaded) -> dict[str, Any]:
    """An ingest_errors row with its run's source path and `file`, where the file it names is: its
    path is relative to the run's job folder (the ranks of a job share one), else to the run's
    folder, which for a run of one log is the folder the log is in."""
    source, job, path = data.run["source_path"], data.run.get("job"), e.get("path") or ""
    if job:
        file = f"{job}/{path}"
    elif source.endswith(path):
        file = source
    else:
        file = f"{os.path.dirname(source) if os.path.isfile(source) else source}/{path}"
    return dict(e, source_path=source, file=file)


def _keys(data: Loaded) -> tuple[tuple[str, str], tuple[str, str]]:
    return ("path", data.run["source_path"]), ("id", data.run["run_id"])


class Progress:
    """A one-line progress bar on a terminal (stderr), silent elsewhere."""

    def __init__(self, total: int) -> None:
        self.total, self.n, self.t0 = total, 0, time.perf_counter()
        self.tty = sys.stderr.isatty() and total > 0

    def step(self, s: IngestSummary) -> None:
        self.n += 1
        if self.tty:
            width = 30
            filled = int(width * self.n / self.total)
            mb = s.bytes / 1e6
            sys.stderr.write(
                f"\r[{'#' * filled}{'.' * (width - filled)}] {self.n}/{self.total} runs, {mb:.0f} MB, "
                f"{s.errors} errors, {time.perf_counter() - self.t0:.1f} s"
            )
            sys.stderr.flush()

    def done(self) -> None:
        if self.tty:
            sys.stderr.write("\r" + " " * 90 + "\r")
            sys.stderr.flush()
