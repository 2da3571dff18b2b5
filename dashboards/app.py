"""The inductor-warehouse dashboards: `iwh dashboard` serves this with `streamlit run`."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from inductor_warehouse.dashboards import chrome, filters

# Not `pages/`: Streamlit would also serve that folder as its older, unfiltered multipage app to a
# browser whose first request is a page's URL, before app.py has declared the navigation.
PAGES = Path(__file__).parent / "sections"

# a local image: an emoji or :material/...: favicon is fetched from a public host at every page load
st.set_page_config(page_title="inductor-warehouse", page_icon=str(Path(__file__).parent / "static" / "icon.png"),
                   layout="wide")

nav = st.navigation([
    st.Page(PAGES / "overview.py", title="Overview", icon=":material/dashboard:", default=True),
    st.Page(PAGES / "trends.py", title="Trends", icon=":material/trending_up:"),
    st.Page(PAGES / "compare.py", title="Compare releases", icon=":material/compare_arrows:"),
    st.Page(PAGES / "changes.py", title="What changed when", icon=":material/history:"),
    st.Page(PAGES / "suite.py", title="Benchmark suite", icon=":material/speed:"),
    st.Page(PAGES / "explorer.py", title="Run explorer", icon=":material/account_tree:"),
    st.Page(PAGES / "graph_breaks.py", title="Graph breaks & recompiles", icon=":material/call_split:"),
    st.Page(PAGES / "compile_time.py", title="Compile time", icon=":material/timer:"),
    st.Page(PAGES / "sql_console.py", title="SQL console", icon=":material/terminal:"),
])

problem = chrome.open_problem()
if problem:
    st.error(problem)
    st.stop()
filters.sidebar()
nav.run()
