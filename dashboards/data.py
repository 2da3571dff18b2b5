"""The one door from the pages to the warehouse: canned query files run through `st.connection`.

Pages never hold SQL. They call `run("area/name", **params)`, which loads the query file, binds
its parameters with the same rules as the CLI (`schema.queries.Query.bind`), rewrites DuckDB's
`$name` into SQLAlchemy's `:name`, and runs it through the cached read-only connection.
"""

from __future__ import annotations

import os
import re
import sys

import pandas as pd
import streamlit as st
from sqlalchemy import text

from schema import queries
from schema.warehouse import default_db_path

CACHE_SECONDS = 300
# text() would take any `:word` as a bind; DuckDB casts (`::`) and `$name` parameters are not.
_COLON_BIND = re.compile(r"(?<![:\w\\]):(?=\w)")
_DOLLAR_PARAM = re.compile(r"\$([A-Za-z_]\w*)")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def db_path() -> str:
    """The warehouse file: `streamlit run app.py -- PATH`, else $IWH_DB, else ./warehouse.duckdb."""
    # argv is the app's own only under `streamlit run` (under pytest it is pytest's)
    if os.path.basename(sys.argv[0]) == "app.py" and len(sys.argv) > 1:
        return sys.argv[1]
    return default_db_path()


def connection():
    # read_only + no external access: even the SQL console cannot write, ATTACH or read files
    return st.connection(
        "warehouse", type="sql", url=f"duckdb:///{os.path.abspath(db_path())}",
        connect_args={"read_only": True, "config": {"enable_external_access": False}},
    )


def to_sqlalchemy(sql: str, names) -> str:
    """DuckDB `$name` parameters -> SQLAlchemy `:name`; stray `:word` escaped so it stays text."""
    names = set(names)
    sql = _COLON_BIND.sub(r"\\:", sql)
    return _DOLLAR_PARAM.sub(lambda m: f":{m.group(1)}" if m.group(1) in names else m.group(0), sql)


def run(name: str, **params) -> pd.DataFrame:
    """Run the canned query `name` with `params` (unset ones are NULL or their default)."""
    q = queries.get(name)
    bound = q.bind(params)
    return connection().query(to_sqlalchemy(q.sql, bound), params=bound, ttl=CACHE_SECONDS,
                              show_spinner=False)


def adhoc(sql: str, params: dict | None = None, max_rows: int = 10_000) -> tuple[pd.DataFrame, bool]:
    """User-typed SQL (the console): not cached, no retries; returns (rows, truncated)."""
    params = params or {}
    with connection().engine.connect() as con:
        result = con.execute(text(to_sqlalchemy(sql, params)), params)
        if not result.returns_rows:
            return pd.DataFrame(), False
        rows = result.fetchmany(max_rows + 1)
        frame = pd.DataFrame(rows[:max_rows], columns=list(result.keys()))
    return frame, len(rows) > max_rows


def show_sql(*names: str) -> None:
    """The SQL behind what the page just showed, as Datasette shows it."""
    with st.expander("SQL behind this" if len(names) == 1 else f"SQL behind this ({len(names)} queries)"):
        for name in names:
            q = queries.get(name)
            st.caption(f"`{q.name}`: {q.title}  ·  `iwh query {q.name}`")
            st.code(q.sql, language="sql")


def warehouse_is_empty() -> bool:
    return int(run("dashboard/overview_counts").iloc[0]["runs"]) == 0


def open_problem() -> str | None:
    """Why the warehouse cannot be shown, in words that say what to do; None when it can."""
    path = db_path()
    if not os.path.exists(path):
        return (f"No warehouse at `{path}`. Create one with `iwh --db {path} ingest PATH`, "
                "or point the dashboard at one with `iwh --db PATH dashboard`.")
    try:
        run("dashboard/filter_options")
    except Exception as e:  # an old or foreign file: the message names the cause
        return f"Cannot read the warehouse `{path}`: {type(e).__name__}: {e}"
    return None


def stop_if_empty() -> None:
    """Say plainly when there is nothing to show, and stop the page there."""
    if warehouse_is_empty():
        st.info(f"The warehouse `{db_path()}` has no runs yet. Ingest some with "
                f"`iwh --db {db_path()} ingest PATH` (a run folder, a torch_compile_debug folder or a trace log).")
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
    if value is None or pd.isna(value):
        return "–"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.3f}"
    return f"{int(value):,}"


def plain(text) -> str:
    """Artifact text (model names, paths, ids) for a markdown element: every markup character escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))


def compare_releases(base: str, head: str):
    """`iwh compare` (ingest/compare.py) on the dashboard's read-only connection."""
    return _compare(db_path(), base, head)


def kernel_changes(base_run: str, head_run: str, model: str):
    """`iwh compare --kernels` for one pair of runs, with the sources and unified diff of changed kernels."""
    return _kernel_changes(db_path(), base_run, head_run, model)


# the warehouse path is part of the cache key: one process may serve (or test) several warehouses
@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _compare(db: str, base: str, head: str):
    from analysis.compare import compare

    with _driver_connection() as con:
        return compare(con, base, head)


@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _kernel_changes(db: str, base_run: str, head_run: str, model: str):
    from analysis.compare import CHANGED, code_diff, kernel_diff, kernel_source

    with _driver_connection() as con:
        diff = kernel_diff(con, base_run, head_run, model)
        sources = {h: kernel_source(con, h) for k in diff.kernels if k.status == CHANGED
                   for h in (k.base_hash, k.head_hash)}
        # by position in diff.kernels: kernel names repeat across graphs (each graph counts from _0)
        unified = {i: code_diff(con, k) for i, k in enumerate(diff.kernels) if k.status == CHANGED}
    return diff, sources, unified


class _driver_connection:
    """The DuckDB connection under a pooled SQLAlchemy one, for code that speaks DuckDB directly."""

    def __enter__(self):
        self.raw = connection().engine.raw_connection()
        return self.raw.driver_connection

    def __exit__(self, *exc):
        self.raw.close()


def code_language(source: str | None) -> str:
    """The highlighter for a kernel's source, told by its content: C++ kernels start with includes,
    Spyre kernel specs are JSON, Triton kernels are Python."""
    head = (source or "").lstrip()
    if head.startswith(("#include", "extern ")):
        return "cpp"
    return "json" if head.startswith("{") else "python"
