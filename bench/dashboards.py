"""Render every dashboard page with streamlit.testing's AppTest on one warehouse and time it.

    python -m bench.dashboards WAREHOUSE REPEATS RUN_ID   (prints JSON; run.py starts it)

A process of its own per warehouse: Streamlit's caches and connections are per process. The query
cache is cleared before each render, so every render runs its queries (a first visit), while the
connection stays open, as in a served dashboard. Explorer opens on RUN_ID."""

from __future__ import annotations

import json
import os
import sys
import time

from bench.measure import ROOT, median

APP = ROOT / "dashboards" / "app.py"
PAGES = ("overview", "trends", "compare", "changes", "explorer", "graph_breaks", "compile_time", "suite", "sql_console")


def render(page: str, run_id: str) -> tuple[float, list[str]]:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from inductor_warehouse.dashboards.navigation import RUN_KEY

    st.cache_data.clear()
    t0 = time.perf_counter()
    at = AppTest.from_file(str(APP), default_timeout=600)
    if page == "explorer":
        at.session_state[RUN_KEY] = run_id
    if page != "overview":
        at.switch_page(f"sections/{page}.py")  # opened by its URL: that page's script alone
    at.run()
    return time.perf_counter() - t0, [str(e.value)[:300] for e in at.exception]


def main() -> None:
    db, repeats, run_id = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    os.environ["IWH_DB"] = db
    out = {}
    render("overview", run_id)  # imports, the connection, Streamlit's own start: not a page's cost
    for page in PAGES:
        times, errors = [], []
        for _ in range(repeats):
            t, errors = render(page, run_id)
            times.append(t * 1000)
        out[page] = {"median_ms": median(times), "min_ms": min(times), "max_ms": max(times), "n": repeats,
                     "exceptions": errors}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
