"""The batch writer: parsed runs -> the warehouse, a batch of runs in one transaction.

A run is replaced whole (same run id, or same folder with changed files) and never duplicated. A
batch is one transaction with one INSERT per table, so a reader sees a run whole or not at all and
a writer killed in it leaves nothing; the write lock is held only while a batch is written
(`store/writer.py`: `Writer.session`). When the warehouse refuses a batch, its runs are written one
by one, and a run it still refuses becomes one `ingest_errors` row instead.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from inductor_warehouse.ingest import spill
from inductor_warehouse.ingest.convert import Columns, Loaded
from inductor_warehouse.ingest.copies import StoredCopy, copies_of_stored
from inductor_warehouse.ingest.rows import IngestErrorRow, error_row
from inductor_warehouse.schema.ddl import FACT_TABLES, LEAST_TEXTS, SHARED_REFERENCES, SHARED_TEXTS
from inductor_warehouse.store.connection import one_row, transaction
from inductor_warehouse.store.errors import classify, first_line, write_failure
from inductor_warehouse.store.rollups import fill_harness_points, fill_harness_workloads, fill_rollups
from inductor_warehouse.store.writer import Writer

# run keys a DELETE names in one IN list: up to DuckDB's dynamic_or_filter_threshold (50) a list of
# constants reaches the scan, whose zone maps then skip the row groups of other runs
_KEYS_PER_DELETE = 50


def commit(writer: Writer, columns: Columns, batch: list[Loaded], threads: int | None,
           now: str, copies: list[tuple[Loaded, StoredCopy]] | None = None) -> list[tuple[Loaded, IngestErrorRow]]:
    """Write a batch in one session; return the runs the warehouse refused, each with the error row
    written in its place. `threads`: DuckDB's threads from now on (0: its default, every core;
    None: as they are). `copies`: where the runs that copy a stored run under other names are put,
    left out of the write (ingest/copies.py); None: they are stored, taking the stored run over."""
    refused: list[tuple[Loaded, IngestErrorRow]] = []
    try:
        with writer.session() as con:
            if threads == 0:
                con.execute("RESET threads")
            elif threads:
                con.execute(f"SET threads = {threads}")
            todo = batch
            if copies is not None and (found := copies_of_stored(con, batch)):
                copies.extend(found)
                todo = [d for d in batch if all(d is not c for c, _ in found)]
                if not todo:
                    return refused
            try:
                write(con, todo)
                return refused
            except Exception as e:
                _raise_if_fatal(writer, e)
                if len(todo) == 1:
                    refused.append((todo[0], refuse(con, columns, todo[0], e, now)))
                    return refused
            for d in todo:
                try:
                    write(con, [d])
                except Exception as e:
                    _raise_if_fatal(writer, e)
                    refused.append((d, refuse(con, columns, d, e, now)))
    finally:
        for d in batch:
            spill.discard(d)
    return refused


def write(con: duckdb.DuckDBPyConnection, batch: list[Loaded]) -> None:
    """One transaction for the batch. A long log's rows come from the Parquet parts it was spilled
    to while it was parsed: DuckDB streams them in, so memory stays bounded."""
    run_ids = [d.run["run_id"] for d in batch]
    with transaction(con):
        old = [r[0] for r in con.execute(
            "SELECT run_id FROM runs WHERE run_id IN (SELECT unnest(?)) OR source_path IN (SELECT unnest(?))",
            [run_ids, [d.run["source_path"] for d in batch]],
        ).fetchall()]
        # the batch's runs take the next run keys, never those of the runs they replace: a run's
        # rows are found by its key
        first = one_row(con, "SELECT coalesce(max(run_key), 0) FROM runs")[0]
        keys = {id(d): first + i for i, d in enumerate(batch, 1)}
        # a run not in `runs` has no rows anywhere (a run is written in one transaction), but for
        # the error row of an earlier attempt the warehouse refused
        named = texts_named_by(con, old)
        delete_runs(con, sorted(old))
        con.execute("DELETE FROM ingest_errors WHERE run_id IN (SELECT unnest(?))", [run_ids])
        forget_failures(con, [d.run["source_path"] for d in batch])
        for d in batch:
            for table, path in d.spilled:
                con.execute(f"INSERT INTO {table} BY NAME SELECT * REPLACE (?::VARCHAR AS run_id, ?::BIGINT AS run_key) "
                            "FROM read_parquet(?)", [d.run["run_id"], keys[id(d)], path])
        insert(con, "runs", pa.concat_tables([_keyed(d.tables["runs"], keys[id(d)]) for d in batch]))
        for table in FACT_TABLES:
            parts = [_keyed(d.tables[table], keys[id(d)]) for d in batch if table in d.tables]
            if parts:
                insert(con, table, pa.concat_tables(parts))
        # a kernel says what its graph came from (a cache hit's cached output code); set here, once
        # every row of the batch is in, spilled parts included. The batch's keys are a range: zone
        # maps skip every other run's kernels
        batch_keys = [first + 1, first + len(batch)]
        con.execute("""UPDATE kernels SET cache_state = g.cache_state FROM graphs g
                       WHERE kernels.run_key = g.run_key AND kernels.graph_id = g.graph_id AND g.cache_state IS NOT NULL
                         AND g.run_key BETWEEN ? AND ? AND kernels.run_key BETWEEN ? AND ?""", batch_keys * 2)
        # a harness row's workload first: the rollups count a harness run's graph breaks once a workload
        if any("harness_results" in d.tables for d in batch):  # the UPDATE costs its planning however few rows
            fill_harness_workloads(con, (first + 1, first + len(batch)))
        fill_rollups(con, run_ids)
        fill_harness_points(con, run_ids + old)
        for table, (key, text) in SHARED_TEXTS.items():
            parts = [d.shared[table] for d in batch if table in d.shared]
            if parts:
                write_shared(con, table, key, text if table in LEAST_TEXTS else None, parts)
        delete_unnamed_texts(con, named)


def texts_named_by(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> dict[str, list[str]]:
    """The shared texts these runs' rows name: table -> hashes (SHARED_REFERENCES)."""
    if not run_ids:
        return {}
    keys = [k for (k,) in con.execute("SELECT run_key FROM runs WHERE run_id IN (SELECT unnest(?))", [run_ids]).fetchall()]
    named: dict[str, list[str]] = {}
    for table, refs in SHARED_REFERENCES.items():
        union = " UNION ".join(f"SELECT {column} FROM {ref} WHERE run_key IN (SELECT unnest(?)) AND {column} IS NOT NULL"
                               for ref, column in refs)
        named[table] = sorted(h for (h,) in con.execute(union, [keys] * len(refs)).fetchall())
    return named


def delete_unnamed_texts(con: duckdb.DuckDBPyConnection, named: dict[str, list[str]]) -> None:
    """Of the shared texts the replaced runs named, those no run's row names any more: kept, they
    would pile up, and a text's kept form would stay one of runs long gone."""
    for table, hashes in named.items():
        if not hashes:
            continue
        key = SHARED_TEXTS[table][0]
        still = " AND ".join(f"{key} NOT IN (SELECT {column} FROM {ref} WHERE {column} IN (SELECT unnest($1)))"
                             for ref, column in SHARED_REFERENCES[table])
        con.execute(f"DELETE FROM {table} WHERE {key} IN (SELECT unnest($1)) AND {still}", [hashes])


def _keyed(tbl: pa.Table, key: int) -> pa.Table:
    """A run's rows with its run key."""
    return tbl.set_column(tbl.schema.get_field_index("run_key"), "run_key", pa.repeat(pa.scalar(key, pa.int64()), len(tbl)))


def write_shared(con: duckdb.DuckDBPyConnection, table: str, key: str, text: str | None,
                 parts: list[pa.Table]) -> None:
    """The batch's shared texts (a table each run, its keys distinct) into `table`: the keys the
    warehouse lacks, found by key alone (no key constraint in a lake; writers hold the lock), and where
    `text` names the text column (a key of several texts: LEAST_TEXTS), a held key whose text a run
    of the batch has a lesser one of, that one replacing it."""
    # the keys handed over as Arrow: a list parameter of thousands of strings costs more than the query
    keys = pa.table({"k": pa.chunked_array([c for part in parts for c in part.column(key).chunks], pa.string())})
    con.register("_keys", keys.combine_chunks().__arrow_c_stream__())
    try:
        held: dict[str, str | None] = dict(con.execute(
            f"SELECT {key}, {text or 'NULL'} FROM {table} WHERE {key} IN (SELECT k FROM _keys)").fetchall())
    finally:
        con.unregister("_keys")
    new, replaced = _kept_of_each(parts, key, text, held)
    if replaced:
        con.execute(f"DELETE FROM {table} WHERE {key} IN (SELECT unnest(?))", [replaced])
    if new.num_rows:
        insert(con, table, new)


def _kept_of_each(parts: list[pa.Table], key: str, text: str | None,
                  held: dict[str, str | None]) -> tuple[pa.Table, list[str]]:
    """The parts' rows to write, each key once, and the held keys they replace. Without `text`
    (equal keys, equal texts) a key's first row, unless `held`; with it, the key's least text of the
    parts' and the held one (held: key -> its text), so that whichever order runs come in, in one
    batch or many, the least is kept. Cut with slices, not pyarrow.compute, whose import would slow
    the writer; only the texts of a key met twice are read."""
    chosen: dict[str, tuple[int, int]] = {}  # key -> (part, row) of the row to write
    least: dict[str, str] = {}  # key met twice -> the least text of it so far
    replaced: list[str] = []
    for p, part in enumerate(parts):
        column = part.column(text) if text is not None else None
        for i, k in enumerate(part.column(key).to_pylist()):
            first = k not in chosen and k not in held
            if first:
                chosen[k] = (p, i)
            elif column is not None:
                if k not in least:
                    least[k] = held[k] if k in held else parts[chosen[k][0]].column(text)[chosen[k][1]].as_py()  # type: ignore[assignment]
                candidate = column[i].as_py()
                if candidate < least[k]:
                    least[k] = candidate
                    if k in held and k not in chosen:
                        replaced.append(k)
                    chosen[k] = (p, i)
    rows: list[list[int]] = [[] for _ in parts]
    for p, i in chosen.values():
        rows[p].append(i)
    kept = [part.slice(start, stop - start) for part, at in zip(parts, rows, strict=True) for start, stop in _spans(sorted(at))]
    return (pa.concat_tables(kept) if kept else parts[0].slice(0, 0)), replaced


def _spans(rows: list[int]) -> list[tuple[int, int]]:
    """Sorted row numbers as (start, stop) ranges of consecutive rows."""
    out: list[tuple[int, int]] = []
    for i in rows:
        if out and out[-1][1] == i:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


def delete_runs(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> None:
    """Every row of these runs, found by run key (by run id, random hashes, each DELETE would read its
    whole table). Rows of an id with no key in `runs` (a run the warehouse refused, rows a crash of
    an older version left) are found by id."""
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


def record_mtimes(con: duckdb.DuckDBPyConnection, touched: list[tuple[float, str, str]]) -> None:
    """New mtimes of files whose content is unchanged (a copy, a checkout): (mtime, run id, path)."""
    if touched:
        con.executemany("UPDATE artifacts SET mtime = ? WHERE run_id = ? AND path = ?", touched)


def recover(con: duckdb.DuckDBPyConnection) -> None:
    """Rows of runs a crashed ingest of an older version was writing in parts (one transaction a
    part, under a `_loading` marker): deleted, so the run is ingested afresh."""
    stale = [r[0] for r in con.execute("SELECT run_id FROM _loading").fetchall()]
    if stale:
        with transaction(con):
            delete_runs(con, stale)
            con.execute("DELETE FROM _loading")


def insert(con: duckdb.DuckDBPyConnection, table: str, tbl: pa.Table, where: str = "") -> None:
    """Insert the Arrow table's rows (those `where` keeps) into `table`, by column name.

    Handed to DuckDB as an Arrow C stream, not a pa.Table, which DuckDB scans through
    pyarrow.dataset (a slow import). Combined into one chunk first: DuckDB would otherwise copy
    each run's small chunk again to fill its vectors."""
    con.register("_rows", tbl.combine_chunks().__arrow_c_stream__())
    try:
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _rows {where}")
    finally:
        con.unregister("_rows")


def _raise_if_fatal(writer: Writer, e: Exception) -> None:
    """Raise when `e` is a failure of the warehouse itself (a full disk, a lost connection: any the
    store classifies), not of one run's rows: no point in trying the runs one by one then."""
    if classify(e) is not None:
        raise write_failure(writer.location, e) from e


def refuse(con: duckdb.DuckDBPyConnection, columns: Columns, d: Loaded, e: Exception, now: str) -> IngestErrorRow:
    """A run the warehouse would not take: none of its rows stay, one error row (returned) says why,
    and its files are not recorded, so the next ingest tries again."""
    row = error_row("", "load", f"the warehouse refused this run's rows, none were written: {type(e).__name__}: "
                                f"{first_line(e)}")
    row["run_id"], row["ingested_at"] = d.run["run_id"], now
    with transaction(con):
        delete_runs(con, [d.run["run_id"]])
        insert(con, "ingest_errors", columns.arrow("ingest_errors", [(None, [row])]))
    return row


def fail(writer: Writer, columns: Columns, source_path: str, e: BaseException, now: str) -> IngestErrorRow:
    """A run whose parse failed: one error row (returned) without a run id (there is no run: its id
    is the hash of files never read whole), in place of the one an earlier attempt left; nothing of
    it is recorded, so the next ingest tries it again."""
    row = error_row(source_path, "parse", f"this run could not be parsed, none of it was written: "
                                          f"{type(e).__name__}: {first_line(e)}")
    row["run_id"], row["ingested_at"] = None, now
    with writer.session() as con, transaction(con):
        forget_failures(con, [source_path])
        insert(con, "ingest_errors", columns.arrow("ingest_errors", [(None, [row])]))
    return row


def forget_failures(con: duckdb.DuckDBPyConnection, source_paths: list[str]) -> None:
    """The parse-failure rows of earlier attempts at these runs."""
    con.execute("DELETE FROM ingest_errors WHERE run_id IS NULL AND kind = 'parse' AND path IN (SELECT unnest(?))",
                [source_paths])


def kernels_unknown(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> int:
    """How many of the runs have no kernel count (run_rollups: no graph's code came, or a cache hit's
    kernels were never logged), so a summary can say so rather than count them as 0. A run of a
    benchmark harness's results alone compiled nothing: it has no kernels to be unknown."""
    return int(one_row(con, "SELECT count(*) FROM run_rollups WHERE run_id IN (SELECT unnest(?)) AND kernel_count IS NULL"
                            " AND run_id NOT IN (SELECT run_id FROM harness_holders)", [run_ids])[0])
