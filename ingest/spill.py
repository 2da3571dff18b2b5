"""Spill files: rows a long trace log hands over mid-parse go to Parquet files in a temporary
folder, one per table and hand-over, instead of staying in memory; the writer inserts them with
the rest of their run. Their run_id column is filled at insert time: the run id (a hash of every
file) is known only once the whole run is read.
"""

from __future__ import annotations

import shutil
import tempfile
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inductor_warehouse.ingest.convert import Columns, Loaded
    from inductor_warehouse.ingest.rows import IngestErrorRow, Row


class Spill:
    """The `spill` callable the assembler gives its trace parser, for one run."""

    def __init__(self, columns: Columns) -> None:
        self.columns = columns
        self.dir: str | None = None
        self.parts: list[tuple[str, str]] = []  # (table, Parquet file), in hand-over order
        self.generated_kernels = 0
        self.misfits: list[IngestErrorRow] = []

    def __call__(self, rows: dict[str, list[Row]]) -> None:
        for table, part in rows.items():
            if not part:
                continue
            if table == "kernels":
                self.generated_kernels += sum(1 for k in part if k.get("generated"))
            self.dir = self.dir or tempfile.mkdtemp(prefix="iwh-spill-")
            path = f"{self.dir}/{len(self.parts)}-{table}.parquet"
            import pyarrow.parquet as pq  # only logs long enough to spill need it, and its import is slow

            pq.write_table(self.columns.arrow(table, [(None, part)], self.misfits), path)
            self.parts.append((table, path))

    def discard(self) -> None:
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)


def discard(data: Loaded) -> None:
    """A run's spill folder, gone (written or not)."""
    if data.spill_dir:
        shutil.rmtree(data.spill_dir, ignore_errors=True)


def pack(data: Loaded) -> Loaded:
    """The run's spilled parts as bytes, their folder gone: files of a Ray worker's machine travel
    back with the run."""
    if data.spilled:
        parts: list[tuple[str, str | bytes]] = []  # (table, the part's bytes) while packed; (table, its file) once unpacked
        for table, path in data.spilled:
            with open(path, "rb") as fh:
                parts.append((table, fh.read()))
        discard(data)
        data.spilled, data.spill_dir = parts, None
    return data


def unpack(data: Loaded) -> Loaded:
    """The run's packed parts as files of a folder of this machine's, for the writer."""
    if data.spilled:
        data.spill_dir = tempfile.mkdtemp(prefix="iwh-spill-")
        parts: list[tuple[str, str | bytes]] = []
        for i, (table, content) in enumerate(data.spilled):
            path = f"{data.spill_dir}/{i}-{table}.parquet"
            with open(path, "wb") as fh:
                fh.write(content)  # type: ignore[arg-type]
            parts.append((table, path))
        data.spilled = parts
    return data
