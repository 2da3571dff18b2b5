"""Runs -> the warehouse: the loader, whose stages are modules of their own.

1. find the runs (`ingest/discover.py`; object storage: `ingest/remote.py`);
2. leave out those whose files are unchanged (`ingest/unchanged.py`);
3. parse each run where the executor says (`ingest/executors.py`: this process, worker processes,
   Ray tasks): fetch it, assemble its rows (`ingest/assemble.py`), spill a long log's rows to disk
   on the way (`ingest/spill.py`), and convert them to Arrow (`ingest/convert.py`);
4. write the runs in batches, one transaction each (`ingest/write.py`), while this process alone
   writes;
5. count what was stored (`ingest/summary.py`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timezone

import duckdb

from inductor_warehouse.ingest import executors, spill, unchanged, write
from inductor_warehouse.ingest.assemble import assemble
from inductor_warehouse.ingest.convert import Columns, Loaded, loaded
from inductor_warehouse.ingest.copies import StoredCopy, unchanged_named_otherwise
from inductor_warehouse.ingest.listing import Run, Skipped
from inductor_warehouse.ingest.parsers.manifest import Label
from inductor_warehouse.ingest.remote import discover_anywhere, fetched
from inductor_warehouse.ingest.summary import IngestSummary, Progress
from inductor_warehouse.store.location import Location
from inductor_warehouse.store.writer import Writer

# A batch is bounded by the input bytes it was parsed from, so memory stays flat whatever the
# corpus; a commit costs more than a small run's inserts, so a batch holds many runs.
BATCH_BYTES = 64 << 20
BATCH_RUNS = 64
# what each run's parse is given besides its run: the warehouse's columns, the model and labels the
# command line gave, the ingest's one timestamp
Context = tuple[Columns, str | None, Mapping[str, Label] | None, str]


def ingest_paths(  # noqa: C901 - the pipeline's stages in order
    paths: Sequence[str | os.PathLike[str]],
    db: str | Location | None,
    *,
    jobs: int = 1,
    model: str | None = None,
    labels: Mapping[str, Label] | None = None,
    progress: bool = False,
    force: bool = False,
    wait: float | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> IngestSummary:
    """Ingest the runs under `paths` (folders, files, s3:// URLs) into the warehouse `db` (a
    location: file or lake). `executor` "local" parses in `jobs` processes of this machine; "ray"
    in Ray tasks, on the cluster at `ray_address` or a local Ray of `jobs` CPUs.

    The warehouse's write lock is held only while a batch is committed (`Writer.session`), so
    dashboards and other ingests go on meanwhile. A run whose rows the warehouse refuses becomes an
    `ingest_errors` row, and the rest of its batch lands; so does a run whose Ray task fails, or
    one of whose objects cannot be fetched."""
    t0 = time.perf_counter()
    found = discover_anywhere(paths)
    summary = IngestSummary(skipped_files=found.skipped, missing=found.missing)
    with Writer(db, wait=wait) as writer:
        _leave_out_own_files(found.skipped, writer.location)
        with writer.session() as con:
            write.recover(con)
            columns = Columns(con)
            todo, touched = (found.runs, []) if force else unchanged.changed(con, found.runs)
            write.record_mtimes(con, touched)
            # run id -> the folder this ingest stores it from, or found it unchanged in
            folders = _kept_folders(con, found.runs, todo)
            if not force:
                read = {r.source_path for r in todo}
                summary.renamed_unchanged = unchanged_named_otherwise(
                    con, [r.source_path for r in found.runs if r.source_path not in read], model, labels)
        summary.skipped_runs = len(found.runs) - len(todo)
        bar = Progress(len(todo)) if progress else None
        # one timestamp for everything one ingest writes
        now = datetime.now(timezone.utc).replace(tzinfo=None).isoformat()
        # the parse workers keep the cores busy: DuckDB's own threads would only contend with them
        here = executor == "local" or not (ray_address or os.environ.get("RAY_ADDRESS"))
        threads = 1 if jobs > 1 and len(todo) > 1 and here else None

        def commit(batch: list[Loaded], threads: int | None) -> None:
            # --force stores a copy of a stored run under this ingest's names; else it is left out
            copies: list[tuple[Loaded, StoredCopy]] | None = None if force else []
            for d, row in write.commit(writer, columns, batch, threads, now, copies):
                summary.refuse(d, row)
            for d, copy in copies or ():
                summary.leave_out(d, copy)

        batch: list[Loaded] = []
        data: Loaded | executors.Failed | None = None
        try:
            for data in parse_all(todo, jobs, (columns, model, labels, now), executor, ray_address):
                if isinstance(data, executors.Failed):
                    summary.fail(data.source_path, write.fail(writer, columns, data.source_path, data.error, now))
                    data = None
                    if bar:
                        bar.step(summary)
                    continue
                if _a_copy(folders, data):
                    spill.discard(data)
                    summary.replaced += 1
                    data = None
                    if bar:
                        bar.step(summary)
                    continue
                folders[data.run["run_id"]] = data.run["source_path"]
                if _clashes(batch, data):
                    commit(batch, threads)
                    batch = []
                batch.append(data)
                summary.tally(data)
                if len(batch) >= BATCH_RUNS or sum(d.bytes_read for d in batch) >= BATCH_BYTES:
                    commit(batch, threads)
                    batch = []
                if bar:
                    bar.step(summary)
            if batch:
                # the parse is done: the last batch and the closing checkpoint may use every core
                commit(batch, 0 if threads else None)
            if summary.run_ids:
                with writer.session() as con:
                    summary.kernels_unknown = write.kernels_unknown(con, summary.run_ids)
        except BaseException:
            # runs parsed but never written must not leave their spill folders behind
            for d in batch + ([data] if isinstance(data, Loaded) and all(d is not data for d in batch) else []):
                spill.discard(d)
            raise
        if bar:
            bar.done()
    summary.seconds = time.perf_counter() - t0
    return summary


def parse_all(runs: list[Run], jobs: int, context: Context, executor: str = "local",
              ray_address: str | None = None) -> Iterator[Loaded | executors.Failed]:
    """Every run parsed (`_parse_one`) by the executor named, as each ends."""
    return executors.parse_all(runs, jobs, context, _parse_one, executor, ray_address)



def _leave_out_own_files(skipped: Skipped, location: Location) -> None:
    """The warehouse's own files (the database, its WAL, its lock files), found under the paths
    ingested (`iwh ingest .` beside ./warehouse.duckdb), are not files to tell the user were skipped."""
    if location.is_lake or location.text == ":memory:":
        return
    own = location.path
    reason = "unrecognised file"
    mine = [p for p in skipped.paths.get(reason, []) if (real := os.path.realpath(p)) == own or real.startswith(own + ".")]
    if mine:
        skipped.forget(reason, mine)

def _parse_one(args: tuple[Run, Context]) -> Loaded:
    """One run, fetched where it lies, assembled and converted: `args` is (run, (columns, model,
    labels, now))."""
    run, (columns, model, labels, now) = args
    spilled = spill.Spill(columns)
    try:
        with fetched(run) as here:
            data = assemble(here, model, labels, spill=spilled)
        return loaded(data, columns, now, spilled)
    except BaseException:
        spilled.discard()
        raise


def _clashes(batch: list[Loaded], data: Loaded) -> bool:
    """A run that replaces one of the same batch must wait for it to be written first."""
    return any(d.run["run_id"] == data.run["run_id"] or d.run["source_path"] == data.run["source_path"] for d in batch)


def _kept_folders(con: duckdb.DuckDBPyConnection, found: list[Run], todo: list[Run]) -> dict[str, str]:
    """Run id -> folder of the stored runs this ingest found unchanged where they are stored: a copy
    of one of them found in a greater folder is not stored from there (`_a_copy`), so that two live
    copies keep the least folder at every ingest rather than the one parsed last."""
    parsed = {r.source_path for r in todo}
    unchanged_paths = [r.source_path for r in found if r.source_path not in parsed]
    if not unchanged_paths:
        return {}
    return dict(con.execute("SELECT run_id, source_path FROM runs WHERE source_path IN (SELECT unnest(?))",
                            [unchanged_paths]).fetchall())


def _a_copy(folders: dict[str, str], data: Loaded) -> bool:
    """A run whose files this ingest found in a lesser folder too (a run id is a hash of its files),
    parsed here or found unchanged where it is stored: stored once, from the least folder, whichever
    was parsed first. A later ingest that finds it in another folder and not in the one it is stored
    from stores it from there (a moved folder)."""
    kept = folders.get(data.run["run_id"])
    return kept is not None and kept < data.run["source_path"]
