"""The one door from the pages to the warehouse: canned query files run through `st.connection`.

Pages never hold SQL. They call `run("area/name", **params)`, which runs the query as the CLI and
the API do (`schema.queries.run`) on the DuckDB connection under the read-only SQLAlchemy one
(`warehouse.py`), and caches its frame; the SQL console's typed statements go through `adhoc`.
"""

from __future__ import annotations

import orjson
import pandas as pd
import streamlit as st

from inductor_warehouse.dashboards.warehouse import CACHE_SECONDS, location, read
from inductor_warehouse.schema import queries


def run(name: str, **params) -> pd.DataFrame:
    """Run the canned query `name` with `params` (unset ones are NULL or their default)."""
    q = queries.get(name)
    return _cached_query(location().printable, q.name, q.bind(params))


# the warehouse is part of the cache key: one process may serve (or test) several warehouses
@st.cache_data(ttl=CACHE_SECONDS, show_spinner=False)
def _cached_query(where: str, name: str, params: dict) -> pd.DataFrame:
    return read(lambda con: _frame(queries.run(con, name, params)))


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
    (schema/readonly.py), stopped after `seconds` (IWH_QUERY_TIMEOUT, 60 where unset), its check
    included, and its first `max_rows` rows no larger than the reader's memory limit; not cached, no
    retries. Returns (rows, truncated). Its rows come through Arrow, which needs no time-zone module
    for a TIMESTAMPTZ (DuckDB's Python rows need pytz)."""
    table, rows = read(None, seconds, typed=(sql, params or {}, max_rows))
    return table.to_pandas(), rows > max_rows
