"""SQL console: ad hoc read-only SQL, starting from any canned query."""

import re

import streamlit as st

from inductor_warehouse.dashboards import cells, data
from inductor_warehouse.schema import queries
from inductor_warehouse.store.bounds import QueryRefused, query_seconds, read_memory

PARAM = re.compile(r"\$([A-Za-z_]\w*)")
BLANK = "(blank)"

st.title("SQL console")
st.caption("Ask anything the canned queries do not: one read-only statement over the warehouse's tables and "
           "views, with DuckDB's own functions (no files, other servers, settings or secrets); a query stops "
           f"after {query_seconds():g} s or past {read_memory()} of memory.")

library = {q.name: q for q in queries.all_queries()}


def load_canned() -> None:
    q = library.get(st.session_state["console_canned"])
    st.session_state["console_sql"] = q.sql if q else ""
    for p in q.params if q else ():
        st.session_state[f"console_param_{p.name}"] = p.default or ""


st.selectbox("Start from a canned query", [BLANK, *library],
             format_func=lambda n: n if n == BLANK else f"{n}: {library[n].title}",
             key="console_canned", on_change=load_canned)
if "console_sql" not in st.session_state:
    st.session_state["console_sql"] = "SELECT model, compiler_version, device, count(*) AS runs\n" \
                                      "FROM runs\nGROUP BY ALL\nORDER BY runs DESC"
sql = st.text_area("SQL", key="console_sql", height=260)

known = {p.name: p for p in library[st.session_state["console_canned"]].params} \
    if st.session_state["console_canned"] in library else {}
names = list(dict.fromkeys(PARAM.findall(sql)))
params = {}
if names:
    st.caption("Parameters ($name in the SQL); leave empty for NULL.")
    cols = st.columns(min(4, len(names)))
    for i, name in enumerate(names):
        help_text = f"{known[name].type}: {known[name].description}" if name in known else None
        raw = cols[i % len(cols)].text_input(name, key=f"console_param_{name}", help=help_text) or None
        params[name] = known[name].convert(raw) if name in known else raw

if st.button("Run", type="primary", key="console_run") and sql.strip():
    try:
        frame, truncated = data.adhoc(sql, params)
    except QueryRefused as e:
        st.error(f"The query failed: {e}")
    except Exception as e:  # the user's SQL: its error is the answer, shown as text
        st.error("The query failed.")
        st.code(f"{type(e).__name__}: {getattr(e, 'orig', None) or e}", language=None, wrap_lines=True)
    else:
        st.caption(f"{len(frame):,} rows" + (" (first rows only)" if truncated else "") +
                   "; an empty cell is NULL, as on every page")
        cells.table(frame)
