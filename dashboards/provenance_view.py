"""The provenance viewer of one graph (the Run explorer's Provenance tab): the pre-grad graph, the
post-grad graph and the generated code side by side, with the model lines they came from above
them. Choosing a kernel, a node or a model line highlights its relatives in the other panels.

The panels are one small HTML page of our own (static/provenance.js and .css) in
`st.iframe`: a click highlights in the browser at once, with no rerun of the page. What
is chosen first comes from the URL (`kernel=`, `line=FILE:LINE`, `node=post:NAME` or `pre:NAME`),
through the two pickers above the panels; the page's "link to this view" gives the URL of any
choice made by clicking in the panels.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import streamlit as st

from inductor_warehouse.analysis import provenance
from inductor_warehouse.dashboards import analyses, cells, chrome, data, state, warehouse

TAB = "Provenance"
STATIC = Path(__file__).parent / "static"
KERNEL_LIMIT = 5000
HEIGHT = 760


@st.cache_data(ttl=warehouse.CACHE_SECONDS, show_spinner=False)
def _model(where: str, run_id: str, graph_id: str) -> tuple[provenance.Provenance, list[str], list[str]]:
    """The graph's viewer model, its panels lacking a text (what would have recorded each), and what
    its kernels' texts are where they are not their own; kept per graph, so changing the choice
    builds nothing again."""
    texts = {r.kind: r.text for r in data.run("explore/provenance_texts", run_id=run_id, graph_id=graph_id).itertuples()}
    links = data.run("explore/provenance_links", run_id=run_id, graph_id=graph_id)
    kernels = data.run("explore/kernels", run_id=run_id, graph_id=graph_id, limit=KERNEL_LIMIT)
    names = kernels["kernel_name"].tolist() if not kernels.empty else []
    sources = None
    notes: list[str] = []
    if not texts.get("output_code") and not kernels.empty:  # Spyre kernel folders: each kernel's spec
        codes = analyses.graph_kernel_codes(run_id, graph_id)
        sources = {c.kernel_name: c.text for c in codes if c.text is not None}
        notes = sorted({c.note for c in codes if c.note})
    rows = [{k: (None if _missing(v) else v) for k, v in r.items()} for r in links.to_dict("records")]
    model = provenance.build(texts, rows, names, sources)
    return model, provenance.missing_texts(texts) if not sources else [], notes


def _missing(v) -> bool:
    try:
        return v != v  # NaN from a NULL in a numeric column
    except (TypeError, ValueError):
        return False


def selection(model: provenance.Provenance) -> dict | None:
    """What the URL chooses: a kernel, a model line or a node (the pickers hold the first two)."""
    kernel, line = st.session_state.get("kernel"), st.session_state.get("line")
    if kernel:
        return {"kind": "kernel", "name": kernel}
    if line:
        return {"kind": "line", "name": line}
    node = st.query_params.get("node", "")
    kind, _, name = node.partition(":")
    if kind in ("pre", "post") and name:
        return {"kind": kind, "name": name}
    return None


def _only(key: str) -> None:
    """A choice in one picker clears the other: one thing is chosen at a time."""
    for other in ("kernel", "line"):
        if other != key:
            st.session_state[other] = None


def show_provenance(run_id: str, graph_id: str) -> None:
    model, missing, notes = _model(warehouse.location().printable, run_id, graph_id)
    if not model.links and not model.kernel_lines:
        st.info(provenance.NO_PROVENANCE)
    for why in missing:
        st.caption(cells.plain(f"No {why}."))
    for note in notes:
        st.caption(cells.plain(note))
    lines = list(model.model)
    left, right = st.columns([1, 1])
    with left:
        st.selectbox("Kernel", model.kernels, index=None, key="kernel", bind="query-params", on_change=_only, args=("kernel",),
                     placeholder="choose a kernel: its nodes and model lines light up")
    # not bound by Streamlit: a bound picker's URL value is its label, and a line's label is its code
    state.from_url("line", "line", lines)
    with right:
        line = st.selectbox("Model line", lines, index=None, key="line", on_change=_only, args=("line",),
                            format_func=lambda k: f"{Path(model.model[k]['file']).name}:{model.model[k]['line']}  "
                                                  f"{model.model[k].get('code') or ''}",
                            placeholder="choose a line of the model: the kernels it became light up")
    state.to_url("line", line)
    st.iframe(page(model, selection(model)), height=HEIGHT)
    st.caption("Click a kernel's line in the code, a node in either graph, or a model line: its relatives light "
               "up in the other panels. Highlighted: the choice (darker) and what it came from or became.")
    chrome.show_sql("explore/provenance_texts", "explore/provenance_links", "explore/kernels", "explore/kernel_code")


def page(model: provenance.Provenance, chosen: dict | None) -> str:
    """The viewer's HTML: its data, its choice, the page script and styles (no file fetched: a
    component's page cannot reach the app's static files without a server option)."""
    payload = json.dumps(model.as_json(), separators=(",", ":")).replace("</", "<\\/")
    script = (STATIC / "provenance.js").read_text()
    style = (STATIC / "provenance.css").read_text()
    counts = {k: len(p.items) for k, p in (("pre", model.pre), ("post", model.post), ("kernel", model.code))}
    first = model.code.lines[0] if model.code.lines else ""
    code_what = "AOTInductor C++" if "::run_impl(" in "\n".join(model.code.lines[:4000]) else \
        "kernel sources" if first.startswith(("# kernel ", "# compiled kernel ")) else "Python wrapper"

    def box(kind: str, title: str, what: str) -> str:
        empty = "" if (model.pre, model.post, model.code)[("pre", "post", "kernel").index(kind)].lines != [""] else \
            '<div class="missing">Not recorded for this graph.</div>'
        return (f'<div class="box" id="p-{kind}"><h4>{html.escape(title)}<span class="what">{html.escape(what)}</span>'
                f'<span class="count"></span></h4><div class="body">{empty}</div></div>')

    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><style>{style}</style></head><body>
<div id="bar"><span id="chosen">Nothing chosen: click a kernel, a node or a model line.</span>
<a id="share" target="_top" style="display:none">link to this view</a></div>
<div class="box" id="model"><h4>Model lines<span class="what">{len(model.model)} lines of the model's code</span></h4>
<div class="body"></div></div>
<div id="panels">
{box("pre", "Pre-grad graph", f"{counts['pre']} nodes")}
{box("post", "Post-grad graph", f"{counts['post']} nodes")}
{box("kernel", "Code", f"{code_what} · {counts['kernel']} kernels")}
</div>
<script>const DATA = {payload}; const SELECTION = {json.dumps(chosen)}; const TAB = {json.dumps(TAB)};</script>
<script>{script}</script></body></html>"""
