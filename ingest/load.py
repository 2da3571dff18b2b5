"""Rows -> DuckDB. The only module that writes the warehouse.

A run is replaced whole (same run id, or same folder with changed files) and never duplicated.
Runs whose files are unchanged (same paths, sizes and mtimes as recorded in `artifacts`) are
skipped without being read. Parsing runs in worker processes with `jobs > 1`, or in Ray tasks
(`executor="ray"`, `ingest/ray_tasks.py`), while this process alone writes; runs in object storage
are fetched by whoever parses them (`ingest/remote.py`). Rows become Arrow tables where they were
parsed (in the workers), so the writer only concatenates and inserts. Runs are written in
batches, one transaction and one INSERT per table each: a commit costs tens of milliseconds, more
than a small run's inserts. The warehouse's write lock is held only while a batch is written
(`schema.warehouse.Writer`).
"""

from __future__ import annotations

import gc
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from itertools import chain, repeat

import duckdb
import orjson
import pyarrow as pa

from inductor_warehouse.ingest import forked, ray_tasks
from inductor_warehouse.ingest.assemble import assemble, file_hash
from inductor_warehouse.ingest.discover import Run
from inductor_warehouse.ingest.remote import FetchError, discover_paths, fetched, object_hash
from inductor_warehouse.ingest.rollups import fill_rollups, migrate
from inductor_warehouse.schema.ddl import FACT_TABLES, SHARED_TEXTS
from inductor_warehouse.store.connection import rollback
from inductor_warehouse.store.errors import WarehouseError, write_failure
from inductor_warehouse.store.location import Location
from inductor_warehouse.store.protocol import WRITE_WAIT_S
from inductor_warehouse.store.writer import Writer

_ARROW = {
    "VARCHAR": pa.string(), "JSON": pa.string(), "TIMESTAMP": pa.string(), "INTEGER": pa.int64(),
    "BIGINT": pa.int64(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_(), "VARCHAR[]": pa.list_(pa.string()),
}
# A batch is bounded by the input bytes it was parsed from, so memory stays flat whatever the corpus.
BATCH_BYTES = 64 << 20
BATCH_RUNS = 64


@dataclass
class IngestSummary:
    runs: int = 0
    skipped_runs: int = 0
    refused: int = 0  # runs the warehouse would not take (counted in errors too)
    failed: int = 0  # runs whose parse (or fetch) failed, none of their rows written (counted in errors too)
    graphs: int = 0
    kernels: int = 0
    errors: int = 0
    bytes: int = 0
    seconds: float = 0.0
    skipped_files: Counter = field(default_factory=Counter)
    counters: Counter = field(default_factory=Counter)
    missing: list[str] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    error_rows: list[dict] = field(default_factory=list)
    replaced: int = 0  # runs of this ingest that a later run of it replaced (counted once, as stored)
    # ("path", source path) and ("id", run id) -> the run of this ingest written under them
    written: dict = field(default_factory=dict, repr=False)

    def line(self) -> str:
        mb = self.bytes / 1e6
        rate = mb / self.seconds if self.seconds > 0 else 0.0
        notes = ([f"{self.skipped_runs} unchanged, skipped"] if self.skipped_runs else []) + \
            ([f"{self.refused} refused by the warehouse"] if self.refused else []) + \
            ([f"{self.failed} failed to parse"] if self.failed else []) + \
            ([f"{self.replaced} replaced by a later run of the same files"] if self.replaced else [])
        skipped = f" ({'; '.join(notes)})" if notes else ""
        return (
            f"ingested {self.runs} runs{skipped}, {self.graphs} graphs, {self.kernels} kernels, "
            f"{self.errors} errors in {self.seconds:.2f} s ({mb:.1f} MB, {rate:.1f} MB/s)"
        )

    def unknown_records(self) -> dict[str, int]:
        """Trace records the catalog does not know, by `kind` or `kind name` (ingest/catalog.py)."""
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
            "graphs": self.graphs, "kernels": self.kernels,
            "errors": self.errors, "bytes": self.bytes, "seconds": round(self.seconds, 3),
            "skipped_files": dict(self.skipped_files), "missing": self.missing, "run_ids": self.run_ids,
            "error_rows": self.error_rows, "unknown_records": self.unknown_records(),
        }, default=str, option=orjson.OPT_INDENT_2).decode()


@dataclass
class _Loaded:
    """One run, ready for the writer: its fact tables as Arrow, the rest small."""
    run: dict
    tables: dict[str, pa.Table]
    shared: dict[str, dict[str, str]]
    errors: list[dict]
    counters: Counter
    bytes_read: int
    graphs: int
    kernels: int
    spilled: list[tuple[str, str]] = field(default_factory=list)  # (table, Parquet file) of rows parsed early
    spill_dir: str | None = None

    # from a parse worker to the writer, each table as one Arrow IPC stream: pickling a table's
    # columns one by one cost the writer 3x more to read back (0.14 s for the 67 GPU logs, not 0.03)
    def __getstate__(self) -> dict:
        return {**self.__dict__, "tables": {name: _ipc(tbl) for name, tbl in self.tables.items()}}

    def __setstate__(self, state: dict) -> None:
        state["tables"] = {name: pa.ipc.open_stream(buf).read_all() for name, buf in state["tables"].items()}
        self.__dict__.update(state)


def _ipc(tbl: pa.Table) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, tbl.schema) as writer:
        writer.write_table(tbl)
    return sink.getvalue()


@dataclass
class _Failed:
    """A run whose parse raised where it is contained (a Ray task; a fetch from object storage)."""
    source_path: str
    error: BaseException


class _Spill:
    """Rows a long trace log hands over mid-parse go to Parquet files in a temporary folder, one per
    table and hand-over, instead of staying in memory; the writer inserts each in a transaction of
    its own. Their run_id column is filled at insert time: the run id (a hash of every file) is
    known only once the whole run is read."""

    def __init__(self, schema: _Schema):
        self.schema = schema
        self.dir: str | None = None
        self.parts: list[tuple[str, str]] = []  # (table, Parquet file), in hand-over order
        self.generated_kernels = 0
        self.misfits: list[dict] = []

    def __call__(self, rows: dict[str, list[dict]]) -> None:
        for table, part in rows.items():
            if not part:
                continue
            if table == "kernels":
                self.generated_kernels += sum(1 for k in part if k.get("generated"))
            self.dir = self.dir or tempfile.mkdtemp(prefix="iwh-spill-")
            path = f"{self.dir}/{len(self.parts)}-{table}.parquet"
            import pyarrow.parquet as pq  # only logs long enough to spill need it (17 ms to import)

            pq.write_table(self.schema.arrow(table, [(None, part)], self.misfits), path)
            self.parts.append((table, path))

    def discard(self) -> None:
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)


class _Schema:
    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.columns: dict[str, dict[str, str]] = {}
        for table, column, dtype in con.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_catalog = current_database() AND table_schema = 'main' ORDER BY table_name, ordinal_position"
        ).fetchall():
            self.columns.setdefault(table, {})[column] = dtype

    def arrow(self, table: str, parts: list[tuple[str | None, list[dict]]], misfits: list[dict] | None = None) -> pa.Table:
        """`parts`: (run_id, rows) pairs; a None run_id leaves the rows' own. A value its column's type
        cannot hold (a float in a BIGINT, a number past 64 bits) is stored NULL and reported in
        `misfits`: one odd value never costs the run."""
        cols = self.columns[table]
        rows = [r for _, part in parts for r in part]
        arrays, names = [], []
        for name, dtype in cols.items():
            if name == "run_id" and parts[0][0] is not None:
                values = list(chain.from_iterable(repeat(run_id, len(part)) for run_id, part in parts))
            elif dtype == "JSON":
                values = [_json(r.get(name)) for r in rows]
            else:
                values = [r.get(name) for r in rows]
            arrays.append(_column(values, _ARROW.get(dtype, pa.string()), f"{table}.{name}", misfits))
            names.append(name)
        return pa.Table.from_arrays(arrays, names=names)


# Columns that hold documents (code, records, guard trees, messages); every other text column holds
# a name, a path, a shape: past NAME_BYTES it is damage (a 20 MB "node name" repeated on every
# lineage row of a graph took a GB at the file's checkpoint), kept cut, with a warning.
DOCUMENT_COLUMNS = frozenset({
    "kernel_sources.source", "compilations.record", "compilations.inductor_config", "guard_trees.text",
    "compile_events.reason", "ingest_errors.message", "ops.source_code", "fusion_decisions.reason",
    "kernels.details", "layouts.details",
})
NAME_BYTES = 64 << 10


def _column(values: list, arrow_type: pa.DataType, column: str, misfits: list[dict] | None) -> pa.Array:
    try:
        if pa.types.is_integer(arrow_type):
            # pa.array(..., type=int64) would truncate 2.5 to 2: let Arrow infer, and accept only integers
            inferred = pa.array(values)
            if inferred.type == arrow_type:
                return inferred
            if pa.types.is_null(inferred.type):
                return pa.nulls(len(values), arrow_type)
            if pa.types.is_integer(inferred.type):
                # not inferred.cast: it imports pyarrow.compute, 47 ms in every parse worker
                return pa.array(values, type=arrow_type)
        else:
            array = pa.array(values, type=arrow_type)
            # a value can pass NAME_BYTES only where the whole column does: the values are looked
            # at only there
            if pa.types.is_string(arrow_type) and column not in DOCUMENT_COLUMNS and array.nbytes > NAME_BYTES \
                    and _has_long_name(values):
                return _cut_names(values, column, misfits)
            return array
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
        pass
    fitted = [_fit(v, arrow_type) for v in values]
    bad = [v for v, f in zip(values, fitted, strict=True) if v is not None and f is None]
    if bad and misfits is not None:
        misfits.append({"path": "", "kind": "load", "line": None, "severity": "warning",
                        "message": f"{len(bad)} value(s) of {column} do not fit its type {arrow_type} "
                                   f"and were stored NULL, e.g. {str(bad[0])[:80]!r}"})
    return pa.array(fitted, type=arrow_type)


def _long_names(values: list):
    """The values past NAME_BYTES of UTF-8. A str of n characters is n to 4n bytes: only the longest
    are encoded. Not pyarrow.compute, whose import (47 ms) was a fifth of the command line's start."""
    return (v for v in values if isinstance(v, str) and len(v) * 4 > NAME_BYTES
            and len(v.encode("utf-8", "surrogatepass")) > NAME_BYTES)


def _has_long_name(values: list) -> bool:
    return next(_long_names(values), None) is not None


def _cut_names(values: list, column: str, misfits: list[dict] | None) -> pa.Array:
    long = list(_long_names(values))
    if misfits is not None:
        misfits.append({"path": "", "kind": "load", "line": None, "severity": "warning",
                        "message": f"{len(long)} value(s) of {column} are longer than {NAME_BYTES >> 10} KB, too long "
                                   f"for a name or a path: kept cut to that, e.g. {long[0][:80]!r}..."})
    return pa.array([_cut(v) if isinstance(v, str) and len(v) * 4 > NAME_BYTES else v for v in values], type=pa.string())


def _cut(name: str) -> str:
    """The name's first NAME_BYTES bytes of UTF-8, less a character they would split."""
    return name.encode("utf-8", "surrogatepass")[:NAME_BYTES].decode("utf-8", "ignore")


_INT64 = (-(1 << 63), (1 << 63) - 1)


def _fit(v, arrow_type: pa.DataType):
    """`v` as the column's type, or None when it has no faithful value of that type."""
    if v is None:
        return None
    try:
        if pa.types.is_integer(arrow_type):
            if isinstance(v, bool) or (isinstance(v, float) and not v.is_integer()):
                return None
            n = int(v)
            return n if _INT64[0] <= n <= _INT64[1] else None
        if pa.types.is_floating(arrow_type):
            return float(v)
        if pa.types.is_boolean(arrow_type):
            return v if isinstance(v, bool) else None
        if pa.types.is_list(arrow_type):
            return [None if x is None else str(x) for x in v] if isinstance(v, (list, tuple)) else None
        return v if isinstance(v, str) else _json(v)
    except (TypeError, ValueError, OverflowError):
        return None


def _json(v):
    if v is None or isinstance(v, str):
        return v
    return orjson.dumps(v, default=str).decode()


def ingest_paths(
    paths: list,
    db: str | Location | None,
    *,
    jobs: int = 1,
    model: str | None = None,
    labels: dict | None = None,
    progress: bool = False,
    force: bool = False,
    wait: float = WRITE_WAIT_S,
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
    found = discover_paths(paths)
    summary = IngestSummary(skipped_files=found.skipped, missing=found.missing)
    with Writer(db, wait=wait, migrate=migrate) as writer:
        with writer.session() as con:
            _recover(con)
            schema = _Schema(con)
            todo = found.runs if force else _changed(con, found.runs)
        summary.skipped_runs = len(found.runs) - len(todo)
        bar = _Progress(len(todo)) if progress else None
        # one timestamp for everything one ingest writes
        now = datetime.now(timezone.utc).replace(tzinfo=None).isoformat()
        # the parse workers keep the cores busy: DuckDB's own threads would only contend with them
        here = executor == "local" or not (ray_address or os.environ.get("RAY_ADDRESS"))
        threads = 1 if jobs > 1 and len(todo) > 1 and here else None
        batch: list[_Loaded] = []
        data = None
        try:
            for data in _parse_all(todo, jobs, (schema, model, labels, now), executor, ray_address):
                if isinstance(data, _Failed):
                    _fail(writer, schema, data, summary, now)
                    data = None
                    if bar:
                        bar.step(summary)
                    continue
                if _clashes(batch, data):
                    _commit(writer, schema, batch, summary, threads, now)
                    batch = []
                batch.append(data)
                _tally(summary, data)
                if len(batch) >= BATCH_RUNS or sum(d.bytes_read for d in batch) >= BATCH_BYTES:
                    _commit(writer, schema, batch, summary, threads, now)
                    batch = []
                if bar:
                    bar.step(summary)
            if batch:
                # the parse is done: the last batch and the closing checkpoint may use every core
                _commit(writer, schema, batch, summary, 0 if threads else None, now)
        except BaseException:
            # runs parsed but never written must not leave their spill folders behind
            for d in batch + ([data] if data is not None and all(d is not data for d in batch) else []):
                _discard_spill(d)
            raise
        if bar:
            bar.done()
    summary.seconds = time.perf_counter() - t0
    return summary


def _commit(writer: Writer, schema: _Schema, batch: list[_Loaded], summary: IngestSummary, threads, now: str) -> None:
    """Write a batch in one session; when the warehouse refuses it, write its runs one by one, and
    record each run it still refuses as an error instead of writing it. `threads`: DuckDB's threads
    from now on (0: its default, every core; None: as they are)."""
    try:
        with writer.session() as con:
            if threads == 0:
                con.execute("RESET threads")
            elif threads:
                con.execute(f"SET threads = {threads}")
            try:
                _write(con, batch)
                return
            except Exception as e:
                if _fatal(e):
                    raise WarehouseError(write_failure(writer.location, e)) from e
                if len(batch) == 1:
                    _refuse(con, schema, batch[0], e, summary, now)
                    return
            for d in batch:
                try:
                    _write(con, [d])
                except Exception as e:
                    if _fatal(e):
                        raise WarehouseError(write_failure(writer.location, e)) from e
                    _refuse(con, schema, d, e, summary, now)
    finally:
        for d in batch:
            _discard_spill(d)


def _fatal(e: Exception) -> bool:
    """A failure of the warehouse itself (a full disk, a lost connection), not of one run's rows:
    no point in trying the runs one by one."""
    text = str(e)
    return isinstance(e, (duckdb.IOException, WarehouseError)) or any(
        s in text for s in ("No space left", "database has been invalidated", "Could not write", "disk full"))


def _first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def _refuse(con, schema: _Schema, d: _Loaded, e: Exception, summary: IngestSummary, now: str) -> None:
    """A run the warehouse would not take: none of its rows stay, one error row says why, and its
    files are not recorded, so the next ingest tries again."""
    run_id = d.run["run_id"]
    row = {"run_id": run_id, "path": "", "kind": "load", "line": None, "severity": "error", "ingested_at": now,
           "message": f"the warehouse refused this run's rows, none were written: {type(e).__name__}: {_first_line(e)}"}
    con.execute("BEGIN TRANSACTION")
    try:
        _delete_runs(con, [run_id])
        _insert(con, "ingest_errors", schema.arrow("ingest_errors", [(None, [row])]))
        con.execute("COMMIT")
    except Exception:
        rollback(con)
        raise
    summary.runs -= 1
    summary.graphs -= d.graphs
    summary.kernels -= d.kernels
    summary.run_ids.remove(run_id)
    for k in (("path", d.run["source_path"]), ("id", run_id)):
        if summary.written.get(k) is d:
            del summary.written[k]
    summary.refused += 1
    summary.errors += 1
    summary.error_rows.append(dict(row, source_path=d.run["source_path"]))


def _fail(writer: Writer, schema: _Schema, f: _Failed, summary: IngestSummary, now: str) -> None:
    """A run whose parse failed: one error row without a run id (there is no run: its id is the hash
    of files never read whole), in place of the one an earlier attempt left; nothing of it is
    recorded, so the next ingest tries it again."""
    e = f.error
    row = {"run_id": None, "path": f.source_path, "kind": "parse", "line": None, "severity": "error",
           "ingested_at": now, "message": f"this run could not be parsed, none of it was written: "
                                         f"{type(e).__name__}: {_first_line(e)}"}
    with writer.session() as con:
        con.execute("BEGIN TRANSACTION")
        try:
            _forget_failures(con, [f.source_path])
            _insert(con, "ingest_errors", schema.arrow("ingest_errors", [(None, [row])]))
            con.execute("COMMIT")
        except Exception:
            rollback(con)
            raise
    summary.failed += 1
    summary.errors += 1
    summary.error_rows.append(dict(row, source_path=f.source_path))


def _forget_failures(con, source_paths: list[str]) -> None:
    con.execute("DELETE FROM ingest_errors WHERE run_id IS NULL AND kind = 'parse' AND path IN (SELECT unnest(?))",
                [source_paths])


def _discard_spill(d: _Loaded) -> None:
    if d.spill_dir:
        shutil.rmtree(d.spill_dir, ignore_errors=True)


def _changed(con, runs: list[Run]) -> list[Run]:
    """Runs whose files differ from what the warehouse recorded for the same folder.

    Same paths, sizes and mtimes: unchanged, nothing read. Same paths and sizes but new mtimes (a
    copy, a checkout, a touch): the files are hashed, and equal content hashes still skip the run
    without parsing it; the new mtimes are recorded so the next ingest needs no hashing.
    """
    if not runs:
        return runs
    known: dict[str, dict[str, tuple]] = {}
    rows = con.execute(
        "SELECT r.source_path, r.run_id, a.path, a.bytes, a.mtime, a.content_hash "
        "FROM runs r JOIN artifacts a USING (run_id) WHERE r.source_path IN (SELECT unnest(?))",
        [[r.source_path for r in runs]],
    ).fetchall()
    for src, run_id, path, size, mtime, digest in rows:
        known.setdefault(src, {})[path] = (size, mtime, digest, run_id)
    out, touched = [], []
    for r in runs:
        before = known.get(r.source_path)
        now = {r.rel(a): a for a in r.artifacts}
        if before is None or set(before) != set(now) or any(before[p][0] != a.size for p, a in now.items()):
            out.append(r)
        elif any(before[p][1] != a.mtime for p, a in now.items()):
            digest = file_hash if r.source is None else object_hash
            if all(a.kind == "empty_graph_folder" or before[p][2] == digest(a.path) for p, a in now.items()):
                touched.extend((a.mtime, before[p][3], p) for p, a in now.items())
            else:
                out.append(r)
    if touched:
        con.executemany("UPDATE artifacts SET mtime = ? WHERE run_id = ? AND path = ?", touched)
    return out


def _parse_one(args) -> _Loaded:
    run, (schema, model, labels, now) = args
    spill = _Spill(schema)
    try:
        with fetched(run) as here:
            data = assemble(here, model, labels, spill=spill)
        return _loaded(data, schema, now, spill)
    except BaseException:
        spill.discard()
        raise


def _parse_or_fail(args) -> _Loaded | _Failed:
    """A run of object storage that cannot be fetched fails alone; a parser's bug still stops the
    ingest, as ever (the fuzzer counts on it)."""
    try:
        return _parse_one(args)
    except FetchError as e:
        return _Failed(args[0].source_path, e)


def _loaded(data, schema: _Schema, now: str, spill: _Spill) -> _Loaded:
    run_id = data.run["run_id"]
    data.run["ingested_at"] = now
    rows = dict(data.tables)
    rows["artifacts"] = data.artifacts
    misfits = spill.misfits
    tables = {t: schema.arrow(t, [(run_id, rows[t])], misfits) for t in FACT_TABLES
              if rows.get(t) and t != "ingest_errors"}
    tables["runs"] = schema.arrow("runs", [(None, [data.run])], misfits)
    data.errors.extend(misfits)
    errors = [dict(e, ingested_at=now) for e in data.errors]
    if errors:
        tables["ingest_errors"] = schema.arrow("ingest_errors", [(run_id, errors)])
    kernels = sum(1 for k in data.tables.get("kernels", ()) if k.get("generated")) + spill.generated_kernels
    return _Loaded(data.run, tables, data.shared, data.errors, data.counters, data.bytes_read,
                   len(data.tables.get("graphs", ())), kernels, spill.parts, spill.dir)


def _parse_all(runs: list[Run], jobs: int, context: tuple, executor: str = "local", ray_address: str | None = None):
    work = [(r, context) for r in runs]
    if executor == "ray":
        yield from _parse_on_ray(work, jobs, ray_address)
        return
    if jobs <= 1 or len(runs) <= 1:
        for w in work:
            yield _parse_or_fail(w)
        return
    # pyarrow imports pandas on its first array (~0.2 s): once here, not once per forked worker
    pa.array([], type=pa.string())
    # larger runs first keeps every worker busy to the end
    work.sort(key=lambda w: -sum(a.size for a in w[0].artifacts))
    for (run, _), data, error in forked.imap_unordered(_parse_or_fail, work, jobs=jobs, initializer=_parse_worker):
        if isinstance(error, forked.WorkerDied):
            # a worker killed (the OOM killer on a huge log) costs its run alone
            yield _Failed(run.source_path, error)
        elif error is not None:
            raise error
        else:
            yield data


def _parse_worker() -> None:
    """A parse worker makes millions of row dicts that live until its run is sent: with Python's
    default thresholds its collector ran 587 times over the GPU traces, 5% of the parse, to free
    the same few cycles that 11 runs free. What it inherited from the writer is frozen out of every
    collection."""
    gc.freeze()
    gc.set_threshold(20_000, 10, 10)


def _parse_on_ray(work: list[tuple], jobs: int, address: str | None):
    """Each run a Ray task. A task that raises, or whose worker dies, fails its run alone: on a
    cluster a lost worker is weather, not a bug to stop a backfill of thousands of runs for."""
    if not work:
        return
    work.sort(key=lambda w: -sum(a.size for a in w[0].artifacts))
    # tasks read object storage as this ingest would: its AWS_* settings travel with them
    env = {k: v for k, v in os.environ.items() if k.startswith("AWS_")} if any(w[0].source for w in work) else None
    for (run, _), data, error in ray_tasks.imap_unordered(_parse_in_task, work, address=address, cpus=jobs, env=env):
        yield _Failed(run.source_path, error) if error is not None else _landed(data)


def _parse_in_task(args) -> _Loaded:
    """`_parse_one` in a Ray task. Its spilled Parquet parts are files of the worker's machine: they
    travel back as bytes, and the writer puts them in a folder of its own (`_landed`)."""
    data = _parse_one(args)
    if data.spilled:
        parts = []
        for table, path in data.spilled:
            with open(path, "rb") as fh:
                parts.append((table, fh.read()))
        _discard_spill(data)
        data.spilled, data.spill_dir = parts, None
    return data


def _landed(data: _Loaded) -> _Loaded:
    if data.spilled:
        data.spill_dir = tempfile.mkdtemp(prefix="iwh-spill-")
        parts = []
        for i, (table, content) in enumerate(data.spilled):
            path = f"{data.spill_dir}/{i}-{table}.parquet"
            with open(path, "wb") as fh:
                fh.write(content)
            parts.append((table, path))
        data.spilled = parts
    return data


def _clashes(batch: list[_Loaded], data: _Loaded) -> bool:
    """A run that replaces one of the same batch must wait for it to be written first."""
    return any(d.run["run_id"] == data.run["run_id"] or d.run["source_path"] == data.run["source_path"] for d in batch)


def _tally(summary: IngestSummary, data: _Loaded) -> None:
    # a run that replaces one this ingest wrote (the same source path or run id: a copy of a run
    # beside itself) leaves one run stored, and the summary says so: what it counts is what is stored
    keys = (("path", data.run["source_path"]), ("id", data.run["run_id"]))
    earlier = next((summary.written[k] for k in keys if k in summary.written), None)
    if earlier is not None:
        summary.runs -= 1
        summary.graphs -= earlier.graphs
        summary.kernels -= earlier.kernels
        summary.errors -= len(earlier.errors)
        for e in earlier.errors:
            summary.error_rows.remove(dict(e, source_path=earlier.run["source_path"]))
        summary.counters -= earlier.counters
        summary.run_ids.remove(earlier.run["run_id"])
        summary.replaced += 1
        for k in (("path", earlier.run["source_path"]), ("id", earlier.run["run_id"])):
            summary.written.pop(k, None)
    for k in keys:
        summary.written[k] = data
    summary.runs += 1
    summary.run_ids.append(data.run["run_id"])
    summary.graphs += data.graphs
    summary.kernels += data.kernels
    summary.errors += len(data.errors)
    summary.error_rows.extend(dict(e, source_path=data.run["source_path"]) for e in data.errors)
    summary.bytes += data.bytes_read
    summary.counters.update(data.counters)


def _write(con, batch: list[_Loaded]) -> None:
    """One transaction for the batch, so a reader sees a run whole or not at all, and a writer killed
    in it leaves nothing. A long log's rows come from the Parquet parts it was spilled to while it
    was parsed: DuckDB streams them in, so memory stays bounded."""
    parted = [d for d in batch if d.spilled]
    shared: dict[str, dict[str, str]] = {}
    for data in batch:
        for table, texts in data.shared.items():
            shared.setdefault(table, {}).update(texts)
    run_ids = [d.run["run_id"] for d in batch]
    con.execute("BEGIN TRANSACTION")
    try:
        old = [r[0] for r in con.execute(
            "SELECT run_id FROM runs WHERE run_id IN (SELECT unnest(?)) OR source_path IN (SELECT unnest(?))",
            [run_ids, [d.run["source_path"] for d in batch]],
        ).fetchall()]
        # the batch's runs take the next run keys (migration 0011), never those of the runs they
        # replace: a run's rows are found by its key
        first = con.execute("SELECT coalesce(max(run_key), 0) FROM runs").fetchone()[0]
        keys = {id(d): first + i for i, d in enumerate(batch, 1)}
        # a run not in `runs` has no rows anywhere (a run is written in one transaction), but for
        # the error row of an earlier attempt the warehouse refused
        _delete_runs(con, sorted(old))
        con.execute("DELETE FROM ingest_errors WHERE run_id IN (SELECT unnest(?))", [run_ids])
        _forget_failures(con, [d.run["source_path"] for d in batch])
        for d in parted:
            for table, path in d.spilled:
                con.execute(f"INSERT INTO {table} BY NAME SELECT * REPLACE (?::VARCHAR AS run_id, ?::BIGINT AS run_key) "
                            "FROM read_parquet(?)", [d.run["run_id"], keys[id(d)], path])
        _insert(con, "runs", pa.concat_tables([_keyed(d.tables["runs"], keys[id(d)]) for d in batch]))
        for table in FACT_TABLES:
            parts = [_keyed(d.tables[table], keys[id(d)]) for d in batch if table in d.tables]
            if parts:
                _insert(con, table, pa.concat_tables(parts))
        # a kernel says what its graph came from (a cache hit's cached output code); set here, once
        # every row of the batch is in, spilled parts included. The batch's keys are a range: zone
        # maps skip every other run's kernels
        batch_keys = [first + 1, first + len(batch)]
        con.execute("""UPDATE kernels SET cache_state = g.cache_state FROM graphs g
                       WHERE kernels.run_key = g.run_key AND kernels.graph_id = g.graph_id AND g.cache_state IS NOT NULL
                         AND g.run_key BETWEEN ? AND ? AND kernels.run_key BETWEEN ? AND ?""", batch_keys * 2)
        fill_rollups(con, run_ids)
        for table, texts in shared.items():
            if texts:
                # no key constraint in a lake: insert the hashes the warehouse lacks (writers hold the lock)
                key, text = SHARED_TEXTS[table]
                _insert(con, table, pa.table({key: list(texts), text: list(texts.values())}),
                        f"WHERE {key} NOT IN (SELECT {key} FROM {table})")
        con.execute("COMMIT")
    except Exception:
        rollback(con)
        raise


def _keyed(tbl: pa.Table, key: int) -> pa.Table:
    """A run's rows with its run key."""
    return tbl.set_column(tbl.schema.get_field_index("run_key"), "run_key", pa.repeat(pa.scalar(key, pa.int64()), len(tbl)))


# run keys a DELETE names in one IN list: up to DuckDB's dynamic_or_filter_threshold (50) a list of
# constants reaches the scan, whose zone maps then skip the row groups of other runs
_KEYS_PER_DELETE = 50


def _delete_runs(con, run_ids: list[str]) -> None:
    """Every row of these runs. Found by run key: by run id (random hashes) each DELETE read its
    whole table, 10 s to replace 5 runs among 100,000. Rows of an id with no key in `runs` (a run
    the warehouse refused, rows a crash of an older version left) are found by id."""
    if not run_ids:
        return
    keyed = con.execute("SELECT run_id, run_key FROM runs WHERE run_id IN (SELECT unnest(?)) AND run_key IS NOT NULL",
                        [run_ids]).fetchall()
    keys = sorted(int(k) for _, k in keyed)
    unkeyed = sorted(set(run_ids) - {r for r, _ in keyed})
    for table in FACT_TABLES + ("runs",):  # runs last: the keys are read from it
        for i in range(0, len(keys), _KEYS_PER_DELETE):
            listed = ", ".join(map(str, keys[i:i + _KEYS_PER_DELETE]))
            con.execute(f"DELETE FROM {table} WHERE run_key IN ({listed}) AND run_id IN (SELECT unnest(?))", [run_ids])
        if unkeyed:
            con.execute(f"DELETE FROM {table} WHERE run_id IN (SELECT unnest(?))", [unkeyed])


def _recover(con) -> None:
    """Rows of runs a crashed ingest of an earlier version was writing in parts (one transaction a
    part, under a `_loading` marker): deleted, so the run is ingested afresh."""
    stale = [r[0] for r in con.execute("SELECT run_id FROM _loading").fetchall()]
    if stale:
        con.execute("BEGIN TRANSACTION")
        _delete_runs(con, stale)
        con.execute("DELETE FROM _loading")
        con.execute("COMMIT")


def _insert(con, table: str, tbl: pa.Table, where: str = "") -> None:
    """Insert the Arrow table's rows (those `where` keeps) into `table`, by column name.

    Given to DuckDB as an Arrow C stream: a pa.Table it scans through pyarrow.dataset, whose import
    (with pyarrow.compute's, 50 to 70 ms) every ingest paid. A batch has one Arrow chunk a run, and
    DuckDB's scan hands each on as a vector of its own, the small ones copied again, strings and
    all, to fill bigger ones: Arrow's one copy of the whole is cheaper (inserts 0.31-0.40 to
    0.23-0.27 CPU s over the 67 GPU traces)."""
    con.register("_rows", tbl.combine_chunks().__arrow_c_stream__())
    try:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _rows {where}")
    finally:
        con.unregister("_rows")


class _Progress:
    """A one-line progress bar on a terminal (stderr), silent elsewhere."""

    def __init__(self, total: int):
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
