"""The one door from the pages to the warehouse: canned query files run through `st.connection`.

Pages never hold SQL. They call `run("area/name", **params)`, which runs the query as the CLI and
the API do (`schema.queries.run`) on the DuckDB connection under the read-only SQLAlchemy one, and
caches its frame.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys

import orjson
import pandas as pd
import pyarrow as pa
import streamlit as st
from sqlalchemy import event

from duckdb_engine import ConnectionWrapper
from duckdb_engine import Dialect as DuckDBDialect
from sqlalchemy.pool import NullPool

from inductor_warehouse.schema import queries
from inductor_warehouse.store.bounds import (ReadStatement, Stuck, check_read_statement, let_go, run_bounded,
                                              run_typed)
from inductor_warehouse.store.location import Location, locate, redact
from inductor_warehouse.store.opening import connect

CACHE_SECONDS = 300
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def location() -> Location:
    """The warehouse: `streamlit run app.py -- PATH`, else $IWH_DB, else ./warehouse.duckdb."""
    # argv is the app's own only under `streamlit run` (under pytest it is pytest's)
    if os.path.basename(sys.argv[0]) == "app.py" and len(sys.argv) > 1:
        return locate(sys.argv[1])
    return locate()


def connection():
    """The read-only SQLAlchemy connection, through `st.connection`. Each DuckDB connection under it
    comes from `store.opening.connect` (the CLI's and the API's door too), locked down: even the SQL
    console cannot write, ATTACH, read files or change settings. A file is opened per query and closed
    after it (NullPool), so an ingest can take the file's write lock between queries; the database
    under them stays open in this process until a writer waits for it (`keep_open`), so a query
    neither reopens it nor reads again what the last one read. A lake's connections are pooled, as
    its readers block no one."""
    loc = location()
    digest = hashlib.blake2b(loc.text.encode(), digest_size=6).hexdigest()
    url = "duckdb:///:memory:" if loc.is_lake else f"duckdb:///{loc.path}"
    return st.connection(f"warehouse-{digest}", type="sql", url=url, connect_args={"iwh_location": loc.text},
                         **({} if loc.is_lake else {"poolclass": NullPool}))


@event.listens_for(DuckDBDialect, "do_connect")
def _open_warehouse(dialect, conn_rec, cargs, cparams):
    """SQLAlchemy asks for a DBAPI connection for `connection()`: the warehouse's own, read-only and
    locked down. (On the dialect class: st.connection makes a new engine when it resets one.)"""
    where = cparams.get("iwh_location")
    if where is None:
        return None
    return ConnectionWrapper(connect(where, read_only=True, lockdown=True, keep_open=True))


def run(name: str, **params) -> pd.DataFrame:
    """Run the canned query `name` with `params` (unset ones are NULL or their default)."""
    q = queries.get(name)
    return _cached_query(location().shown, q.name, q.bind(params))


# the warehouse is part of the cache key: one process may serve (or test) several warehouses
@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _cached_query(where: str, name: str, params: dict) -> pd.DataFrame:
    return _read(lambda con: _frame(queries.run(con, name, params)))


def _read(work, seconds: float | None = None, typed: tuple[ReadStatement, dict] | None = None):
    """`work(con)` on the DuckDB connection under a pooled SQLAlchemy one, within the time limit
    (bounds.py); for a statement someone typed (`typed`), `work(con, its text)` once DuckDB's binder
    says what it reads (`typed`: the statement and its parameters). The
    connection is closed on leaving, not left to the garbage collector: a file warehouse stays locked
    while any connection to it is open, and an ingest waits for that; one whose statement did not
    stop is let go (out of the pool, closed whenever the statement ends)."""
    raw = connection().engine.raw_connection()
    duck = raw.driver_connection
    try:
        if typed is None:
            result = run_bounded(duck, lambda: work(duck), seconds)
        else:
            result = run_typed(duck, typed[0], lambda text: work(duck, text), seconds, typed[1])
    except Stuck:
        raw.detach()
        let_go(raw.close)
        raise
    except BaseException:
        raw.close()
        raise
    raw.close()
    return result


def _frame(result) -> pd.DataFrame:
    """A query's rows as the pages read them: built from its Python values as pandas builds any SQL
    result (exact integers beyond int64, DECIMAL as float, DATE as date), JSON parsed."""
    columns = [d[0] for d in result.description]
    json = {i for i, d in enumerate(result.description) if str(d[1]) == "JSON"}
    rows = result.fetchall()
    if json:
        rows = [tuple(orjson.loads(v) if i in json and v is not None else v for i, v in enumerate(r)) for r in rows]
    return pd.DataFrame.from_records(rows, columns=columns, coerce_float=True)


def adhoc(sql: str, params: dict | None = None, max_rows: int = 10_000,
          seconds: float | None = None) -> tuple[pd.DataFrame, bool]:
    """User-typed SQL (the console): one read statement that reads only the warehouse
    (schema/readonly.py), stopped after `seconds` (IWH_QUERY_TIMEOUT, 60 where unset), within the
    reader's memory limit; not cached, no retries. Returns (rows, truncated). Its rows come through
    Arrow, which needs no time-zone module for a TIMESTAMPTZ (DuckDB's Python rows need pytz)."""
    statement = check_read_statement(sql)
    params = {k: v for k, v in (params or {}).items() if k in statement.parameters}
    table = _read(lambda duck, text: _first_rows(duck, text, params, max_rows + 1), seconds, typed=(statement, params))
    frame = table.to_pandas()
    return frame.head(max_rows), len(frame) > max_rows


def _first_rows(duck, sql: str, params: dict, n: int) -> pa.Table:
    reader = duck.execute(sql, params or None).to_arrow_reader(n)
    batches, rows = [], 0
    for batch in reader:
        batches.append(batch)
        rows += batch.num_rows
        if rows >= n:
            break
    return pa.Table.from_batches(batches, schema=reader.schema).slice(0, n)


def show_sql(*names: str) -> None:
    """The SQL behind what the page just showed, as Datasette shows it."""
    with st.expander("SQL behind this" if len(names) == 1 else f"SQL behind this ({len(names)} queries)"):
        for name in names:
            q = queries.get(name)
            st.caption(f"`{q.name}`: {q.title}  ·  `iwh query {q.name}`")
            st.code(q.sql, language="sql")


def warehouse_is_empty() -> bool:
    return not bool(run("dashboard/has_runs").iloc[0]["has_runs"])


def open_problem() -> str | None:
    """Why the warehouse cannot be shown, in words that say what to do; None when it can."""
    loc = location()
    if not loc.exists():
        return (f"No warehouse at `{loc.shown}`. Create one with `iwh ingest PATH --db {loc.shown}`, "
                "or point the dashboard at one with `iwh dashboard --db LOCATION`.")
    try:
        run("dashboard/filter_options")
    except Exception as e:  # an old or foreign file, an unreachable lake: the message names the cause
        return f"Cannot read the warehouse `{loc.shown}`: {type(e).__name__}: {redact(str(e))}"
    return None


def stop_if_empty() -> None:
    """Say plainly when there is nothing to show, and stop the page there."""
    if warehouse_is_empty():
        shown = location().shown
        st.info(f"The warehouse `{shown}` has no runs yet. Ingest some with "
                f"`iwh ingest PATH --db {shown}` (a run folder, a torch_compile_debug folder or a trace log).")
        st.stop()


def page_offset(key: str, page_size: int) -> int:
    """The offset of the page chosen with `pager(..., key)` (read before the query runs)."""
    return (int(st.session_state.get(key, 1)) - 1) * page_size


def pager(total: int, page_size: int, key: str) -> None:
    """A page picker under a large table; its choice is read by `page_offset` on the next run."""
    pages = max(1, -(-int(total) // page_size))
    if pages > 1:
        st.number_input(f"Page (of {pages}; {int(total):,} rows, {page_size} a page)", 1, pages, key=key)


def number(value) -> str:
    """A metric's value for people: thousands separated, fractions to 3 places, '–' when unknown."""
    if isinstance(value, str):
        return value
    if value is None or pd.isna(value):
        return "–"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.3f}"
    return f"{int(value):,}"


# columns that hold a fraction of 1, shown as a percentage
_SHARES = ("_share", "_hit_rate", "saved_share")
_RIGHT = st.column_config.TextColumn(alignment="right")
_NUMBER_TEXT = re.compile(r"^[-+]?[0-9][0-9,]*(\.[0-9]+)?%?$")


def _text(col: str, value, integer: bool) -> str:
    if value is None or pd.isna(value):
        return ""
    if str(col).endswith(_SHARES):
        return f"{value:.1%}"
    if integer:
        return f"{int(value):,}"
    return f"{value:,.1f}" if abs(value) >= 1000 else (f"{value:.4f}".rstrip("0").rstrip(".") or "0")


def readable(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """A query's frame as people read it, and the column settings that go with it: counts as
    integers (a sum with a NULL in it came back as floats), shares as percentages, and NULL as an
    empty cell (a table shows `None` for a missing value): a numeric column with a NULL becomes
    text, aligned right as numbers are."""
    out, config = frame.copy(), {}
    for col in out.columns:
        values = out[col]
        if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
            text = pd.api.types.is_string_dtype(values) and not isinstance(values.dtype, pd.CategoricalDtype)
            if text and values.isna().any() and values.map(lambda v: v is None or isinstance(v, (str, float))).all():
                out[col] = values.astype(object).where(values.notna(), "")
            if text and values.notna().any() and values.dropna().map(
                    lambda v: isinstance(v, str) and _NUMBER_TEXT.match(v) is not None).all():
                config[col] = _RIGHT  # numbers as text (`+3`, `-11.9%`): aligned as numbers are
            continue
        known = values.dropna()
        integer = pd.api.types.is_integer_dtype(values) or (
            len(known) > 0 and (known == known.round()).all() and not str(col).endswith(("_s", "_us", "_ms"))
            and str(col) != "fusion_rate")
        if values.isna().any() or str(col).endswith(_SHARES):
            out[col] = [_text(col, v, integer) for v in values]
            config[col] = _RIGHT
        elif integer:
            out[col] = values.astype("int64")
    return out, config


def table(frame: pd.DataFrame, column_config: dict | None = None, **kwargs):
    """st.dataframe of `readable(frame)`: what every page's tables show."""
    shown, config = readable(frame)
    return st.dataframe(shown, hide_index=True, width="stretch", column_config=config | (column_config or {}),
                        **kwargs)


_WORKLOAD = re.compile(r"^(.*?)(?: \[(.*)\])?$")


def workload_name(workload: str) -> str:
    """`mlp [batch=8 device=cuda dtype=fp32 mode=train variant=default]` -> `mlp · cuda · train · fp32 ·
    default · batch 8`: a workload key (views/12_workloads.sql) in fewer characters."""
    model, labels = _WORKLOAD.match(workload).groups()
    values = dict(kv.split("=", 1) for kv in (labels or "").split(" ") if "=" in kv)
    values.setdefault("device", "device unknown")  # a run killed early, or written by another tool
    parts = [model] + [values.pop(k) for k in ("device", "mode", "dtype", "variant") if k in values]
    return " · ".join(parts + [f"{k} {v}" for k, v in sorted(values.items())])


def shown(value, missing: str = "unknown") -> str:
    """A label part for people: the value, or a word for a NULL (NaN in a frame): runs killed early
    or written by older tools lack devices, versions and dates."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return missing
    return str(value)


def plain(text) -> str:
    """Artifact text (model names, paths, ids) for a markdown element: every markup character escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))


def compare_releases(base: str, head: str):
    """`iwh compare` (analysis/compare.py) on the dashboard's read-only connection."""
    return _compare(location().shown, base, head)


def kernel_changes(base_run: str, head_run: str, model: str):
    """`iwh compare --kernels` for one pair of runs, with the sources and unified diff of changed kernels."""
    return _kernel_changes(location().shown, base_run, head_run, model)


# the warehouse path is part of the cache key: one process may serve (or test) several warehouses
@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _compare(db: str, base: str, head: str):
    from inductor_warehouse.analysis.compare import compare

    return _read(lambda con: compare(con, base, head))


@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _kernel_changes(db: str, base_run: str, head_run: str, model: str):
    from inductor_warehouse.analysis.kernel_diff import code_diff, kernel_diff, kernel_source

    def work(con):
        diff = kernel_diff(con, base_run, head_run, model)
        sources = {h: kernel_source(con, h) for i in diff.code_changes + diff.meta_changes
                   for h in (diff.kernels[i].base_hash, diff.kernels[i].head_hash)}
        # by position in diff.kernels: kernel names repeat across graphs (each graph counts from _0)
        unified = {i: code_diff(con, diff.kernels[i]) for i in diff.code_changes + diff.meta_changes}
        return diff, sources, unified

    return _read(work)


def line_changes(base_run: str, head_run: str, model: str, file: str, line: int):
    """`iwh compare --lineage FILE:LINE` for one pair of runs, with the unified diff of each pair whose code changed."""
    return _line_changes(location().shown, base_run, head_run, model, file, line)


@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _line_changes(db: str, base_run: str, head_run: str, model: str, file: str, line: int):
    from inductor_warehouse.analysis.kernel_diff import code_diff, kernel_source
    from inductor_warehouse.analysis.line_diff import line_diff

    diff = _kernel_changes(db, base_run, head_run, model)[0]  # the kernel diff the page shows above, cached

    def work(con):
        result = line_diff(con, base_run, head_run, model, file, line, diff=diff)
        changed = [i for i, k in enumerate(result.kernels) if k.change.code_changed]
        sources = {h: kernel_source(con, h) for i in changed
                   for h in (result.kernels[i].change.base_hash, result.kernels[i].change.head_hash)}
        unified = {i: code_diff(con, result.kernels[i].change) for i in changed}
        return result, sources, unified

    return _read(work)


def change_points(model: str, series_label: str | None):
    """`iwh changes` for one model (analysis/changes.py) on the dashboard's read-only connection."""
    return _change_points(location().shown, model, series_label)


@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _change_points(db: str, model: str, series_label: str | None):
    from inductor_warehouse.analysis.changes import changes

    return _read(lambda con: changes(con, model, series_label))


def code_language(source: str | None) -> str:
    """The highlighter for a kernel's source, told by its content: C++ kernels start with includes,
    Spyre kernel specs are JSON, Triton kernels are Python."""
    head = (source or "").lstrip()
    if head.startswith(("#include", "extern ")):
        return "cpp"
    return "json" if head.startswith("{") else "python"
