"""Render every dashboard page with streamlit.testing's AppTest on one warehouse and time it.

    python -m bench.dashboards WAREHOUSE REPEATS RUN_ID   (prints JSON; run.py starts it)
    python -m bench.dashboards WAREHOUSE REPEATS - PAGE '{"param": "value"}'   (one page, opened at that URL)

A process of its own per warehouse: Streamlit's caches and connections are per process. The query
cache is cleared before each render, so every render runs its queries (a first visit), while the
connection stays open, as in a served dashboard. Explorer opens on RUN_ID; `provenance` is the Run
explorer opened by its URL on the provenance viewer of the largest graph with provenance of the
GPU corpus (the most lines of generated code), one of its kernels chosen."""

from __future__ import annotations

import json
import os
import sys
import time

from bench.measure import ROOT, median

APP = ROOT / "dashboards" / "app.py"
PAGES = ("overview", "trends", "compare", "changes", "explorer", "graph_breaks", "compile_time", "suite",
         "sql_console", "provenance")
# the largest graph with provenance of the GPU corpus (copy 0 of the scaled warehouse: no nightly
# versions), by the length of its generated code, and a kernel of it that lineage names
LARGEST_GRAPH = """
    SELECT t.run_id, t.graph_id,
           (SELECT min(l.kernel_name) FROM lineage l WHERE l.run_key = t.run_key AND l.graph_id = t.graph_id
              AND l.kernel_name LIKE 'triton%') AS kernel
    FROM graph_texts t JOIN graph_sources s USING (text_hash) JOIN runs r USING (run_key, run_id)
    WHERE t.kind = 'output_code' AND r.device = 'cuda' AND r.compiler_version NOT LIKE '%.dev%'
      AND EXISTS (SELECT 1 FROM lineage l WHERE l.run_key = t.run_key AND l.graph_id = t.graph_id)
    ORDER BY length(s.text) DESC, t.run_id LIMIT 1"""


def largest_graph(db: str) -> dict:
    from inductor_warehouse.store.api import Warehouse

    with Warehouse(db) as wh:
        run_id, graph_id, kernel = wh.con.execute(LARGEST_GRAPH).fetchone()
    return {"run": run_id, "graph": graph_id, "kernel": kernel, "tab": "Provenance"}


def render(page: str, run_id: str, url: dict | None = None) -> tuple[float, list[str]]:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from inductor_warehouse.dashboards.navigation import RUN_KEY

    st.cache_data.clear()
    t0 = time.perf_counter()
    at = AppTest.from_file(str(APP), default_timeout=600)
    if page == "explorer":
        at.session_state[RUN_KEY] = run_id
    at.query_params.update(url or {})
    if page == "provenance":  # the explorer, opened by its URL on the viewer
        at.switch_page("sections/explorer.py")
    elif page != "overview":
        at.switch_page(f"sections/{page}.py")  # opened by its URL: that page's script alone
    at.run()
    return time.perf_counter() - t0, [str(e.value)[:300] for e in at.exception]


def main() -> None:
    db, repeats, run_id = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    pages, url = (sys.argv[4:5], json.loads(sys.argv[5])) if len(sys.argv) > 5 else (PAGES, {})
    os.environ["IWH_DB"] = db
    out = {}
    render("overview", run_id)  # imports, the connection, Streamlit's own start: not a page's cost
    if "provenance" in pages:
        out["provenance_graph"] = largest_graph(db)
    for page in pages:
        times, errors = [], []
        for _ in range(repeats):
            t, errors = render(page, run_id, out["provenance_graph"] if page == "provenance" else url)
            times.append(t * 1000)
        out[page] = {"median_ms": median(times), "min_ms": min(times), "max_ms": max(times), "n": repeats,
                     "exceptions": errors}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
