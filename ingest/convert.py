"""Rows -> Arrow tables of the warehouse's columns: the one place where a row's values are converted
before they become columns, and where its keys are held to the table's columns.

A parsed run becomes a `Loaded` here, in the process that parsed it, so the writer only
concatenates and inserts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import TYPE_CHECKING, Any, Protocol

import duckdb
import orjson
import pyarrow as pa

from inductor_warehouse.ingest.rows import IngestErrorRow, Json, RunRow, error_row
from inductor_warehouse.schema.ddl import FACT_TABLES, SHARED_TEXTS

if TYPE_CHECKING:
    from inductor_warehouse.ingest.assemble import RunData

_ARROW = {
    "VARCHAR": pa.string(), "JSON": pa.string(), "TIMESTAMP": pa.string(), "INTEGER": pa.int64(),
    "BIGINT": pa.int64(), "DOUBLE": pa.float64(), "BOOLEAN": pa.bool_(), "VARCHAR[]": pa.list_(pa.string()),
}
# Columns that hold documents (code, records, guard trees, messages); every other text column holds
# a name, a path, a shape: past NAME_BYTES it is damage, kept cut, with a warning.
DOCUMENT_COLUMNS = frozenset({
    "kernel_sources.source", "compilations.record", "compilations.inductor_config", "guard_trees.text", "graph_sources.text",
    "compile_events.reason", "ingest_errors.message", "ops.source_code", "fusion_decisions.reason",
    "kernels.details", "layouts.details",
})
NAME_BYTES = 64 << 10
_INT64 = (-(1 << 63), (1 << 63) - 1)


class RowKeyError(Exception):
    """A row carries a key that is no column of its table: a defect of the code that built the row
    (its keys are spelled by the code, never by the input), so it stops the ingest."""


class Columns:
    """The warehouse's columns and their types, table by table, as its catalog says."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.columns: dict[str, dict[str, str]] = {}
        for table, column, dtype in con.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_catalog = current_database() AND table_schema = 'main' ORDER BY table_name, ordinal_position"
        ).fetchall():
            self.columns.setdefault(table, {})[column] = dtype

    def arrow(self, table: str, parts: Sequence[tuple[str | None, Sequence[Mapping[str, Any]]]],
              misfits: list[IngestErrorRow] | None = None) -> pa.Table:
        """`parts`: (run_id, rows) pairs; a None run_id leaves the rows' own. A value its column's type
        cannot hold (a float in a BIGINT, a number past 64 bits) is stored NULL and reported in
        `misfits`: one odd value never costs the run."""
        cols = self.columns[table]
        rows = [r for _, part in parts for r in part]
        stray = set().union(*rows) - cols.keys()
        if stray:
            raise RowKeyError(f"rows of {table} carry {sorted(stray)}, no column of it (ingest/rows.py declares its row)")
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


def _column(values: list[Any], arrow_type: pa.DataType, column: str, misfits: list[IngestErrorRow] | None) -> pa.Array:
    try:
        if pa.types.is_integer(arrow_type):
            # pa.array(..., type=int64) would truncate 2.5 to 2: let Arrow infer, and accept only integers
            inferred = pa.array(values)
            if inferred.type == arrow_type:
                return inferred
            if pa.types.is_null(inferred.type):
                return pa.nulls(len(values), arrow_type)
            if pa.types.is_integer(inferred.type):
                # not inferred.cast: that imports pyarrow.compute into every parse worker
                return pa.array(values, type=arrow_type)
        else:
            array = pa.array(values, type=arrow_type)
            # a value can pass NAME_BYTES only where the whole column does: only then are values looked at
            if pa.types.is_string(arrow_type) and column not in DOCUMENT_COLUMNS and array.nbytes > NAME_BYTES \
                    and _has_long_name(values):
                return _cut_names(values, column, misfits)
            return array
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
        pass
    fitted = [_fit(v, arrow_type) for v in values]
    bad = [v for v, f in zip(values, fitted, strict=True) if v is not None and f is None]
    if bad and misfits is not None:
        misfits.append(_warning(f"{len(bad)} value(s) of {column} do not fit its type {arrow_type} "
                                f"and were stored NULL, e.g. {str(bad[0])[:80]!r}"))
    return pa.array(fitted, type=arrow_type)


def _warning(message: str) -> IngestErrorRow:
    return error_row("", "load", message, severity="warning")


def _long_names(values: list[Any]) -> Iterator[str]:
    """The values past NAME_BYTES of UTF-8. A str of n characters is n to 4n bytes: only the longest
    are encoded (not pyarrow.compute, whose import would slow every command's start)."""
    return (v for v in values if isinstance(v, str) and len(v) * 4 > NAME_BYTES
            and len(v.encode("utf-8", "surrogatepass")) > NAME_BYTES)


def _has_long_name(values: list[Any]) -> bool:
    return next(_long_names(values), None) is not None


def _cut_names(values: list[Any], column: str, misfits: list[IngestErrorRow] | None) -> pa.Array:
    long = list(_long_names(values))
    if misfits is not None:
        misfits.append(_warning(f"{len(long)} value(s) of {column} are longer than {NAME_BYTES >> 10} KB, too long "
                                f"for a name or a path: kept cut to that, e.g. {long[0][:80]!r}..."))
    return pa.array([_cut(v) if isinstance(v, str) and len(v) * 4 > NAME_BYTES else v for v in values], type=pa.string())


def _cut(name: str) -> str:
    """The name's first NAME_BYTES bytes of UTF-8, less a character they would split."""
    return name.encode("utf-8", "surrogatepass")[:NAME_BYTES].decode("utf-8", "ignore")


def _fit(v: Any, arrow_type: pa.DataType) -> object:
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


def _json(v: Json) -> str | None:
    if v is None or isinstance(v, str):
        return v
    return orjson.dumps(v, default=str).decode()


@dataclass
class Loaded:
    """One run, ready for the writer: its fact tables and shared texts as Arrow, the rest small."""
    run: RunRow
    tables: dict[str, pa.Table]
    shared: dict[str, pa.Table]  # SHARED_TEXTS table -> its (hash, text) rows, each hash once
    errors: list[IngestErrorRow]
    counters: Counter[str]
    bytes_read: int
    graphs: int
    kernels: int
    # (table, Parquet file) of rows parsed early; (table, the file's bytes) while packed (ingest/spill.py)
    spilled: Sequence[tuple[str, str | bytes]] = field(default_factory=list)
    spill_dir: str | None = None

    # from a parse worker to the writer each table goes as one Arrow IPC stream, which the writer
    # reads back faster than a table pickled column by column
    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "tables": {name: _ipc(tbl) for name, tbl in self.tables.items()},
                "shared": {name: _ipc(tbl) for name, tbl in self.shared.items()}}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for part in ("tables", "shared"):
            state[part] = {name: pa.ipc.open_stream(buf).read_all() for name, buf in state[part].items()}
        self.__dict__.update(state)


_SHARED_SCHEMAS = {t: pa.schema([(key, pa.string()), (text, pa.string())]) for t, (key, text) in SHARED_TEXTS.items()}


def _ipc(tbl: pa.Table) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, tbl.schema) as writer:
        writer.write_table(tbl)
    return sink.getvalue()


class Spilled(Protocol):
    """What a run's spill (ingest/spill.py `Spill`, which imports this module) holds once the run is read."""
    dir: str | None
    parts: list[tuple[str, str]]
    generated_kernels: int
    misfits: list[IngestErrorRow]


def loaded(data: RunData, columns: Columns, now: str, spill: Spilled) -> Loaded:
    """The assembled run `data` (ingest/assemble.py RunData) as Arrow, stamped `now`; `spill` (ingest/spill.py)
    holds what it handed over early, and collects the values that did not fit."""
    run_id = data.run["run_id"]
    data.run["ingested_at"] = now
    rows: dict[str, Sequence[Mapping[str, Any]]] = dict(data.tables)
    rows["artifacts"] = data.artifacts
    misfits = spill.misfits
    tables = {t: columns.arrow(t, [(run_id, rows[t])], misfits) for t in FACT_TABLES
              if rows.get(t) and t != "ingest_errors"}
    tables["runs"] = columns.arrow("runs", [(None, [data.run])], misfits)
    data.errors.extend(misfits)
    errors = [dict(e, ingested_at=now) for e in data.errors]
    if errors:
        tables["ingest_errors"] = columns.arrow("ingest_errors", [(run_id, errors)])
    kernels = sum(1 for k in data.tables.get("kernels", ()) if k.get("generated")) + spill.generated_kernels
    # texts made Arrow here, in the worker: as Python strings they would be copied four times more
    # on their way into the warehouse (pickled, unpickled, and made Arrow by the writer)
    shared = {t: pa.table({SHARED_TEXTS[t][0]: list(texts), SHARED_TEXTS[t][1]: list(texts.values())},
                          schema=_SHARED_SCHEMAS[t]) for t, texts in data.shared.items() if texts}
    return Loaded(data.run, tables, shared, data.errors, data.counters, data.bytes_read,
                  len(data.tables.get("graphs", ())), kernels, spill.parts, spill.dir)
