"""Graph breaks, recompiles and compile failures: which causes cost the most, across all runs, and where."""

import pandas as pd
import streamlit as st

from inductor_warehouse.analysis.words import plural
from inductor_warehouse.dashboards import cells, chrome, data, filters, state
from inductor_warehouse.dashboards.navigation import VIEWER_COLUMN, open_run_button, viewer_url

KINDS = {"graph_break": "Graph breaks", "uncounted_break": "Uncounted breaks", "recompile": "Recompiles",
         "restart": "Restarts", "failure": "Failures"}
# the rows that say why a count is unknown (compile_events.kind): notes, not events, drilled into as kinds are
MARKERS = {"unknown_break": "Why breaks are unknown", "unknown_uncounted": "Why uncounted breaks are unknown",
           "unknown_recompile": "Why recompiles are unknown"}
UNKNOWN_HELP = ("Unknown, not 0: no run in view has a file that records them (a profile, a TORCH_COMPILE_DEBUG tree, "
                "torch-spyre files, or a log of a release that writes no record of them).")
ORIGINS = {"model": "the model's code", "package": "installed packages", "torch": "torch", "stdlib": "the standard library"}
COLUMNS = {"model": "in_model", "package": "in_packages", "torch": "in_torch", "stdlib": "in_stdlib"}

st.title("Graph breaks & recompiles")
chrome.stop_if_empty()
f = filters.current()

counts = data.run("dashboard/break_counts", **f).set_index("kind")
totals = data.run("dashboard/break_totals", **f).set_index("kind")
all_unknown = totals["total"].isna().all()
cols = st.columns(len(KINDS))
for col, (kind, label) in zip(cols, KINDS.items(), strict=False):
    total, unknown = totals.loc[kind, "total"], int(totals.loc[kind, "unknown_runs"])
    if cells.or_missing(total, "") == "":
        col.metric(label, "–", help=UNKNOWN_HELP)
        if not all_unknown:
            col.caption(f"unknown: none of these {plural(unknown, 'run')} has a file that records them")
        continue
    row = totals.loc[kind]
    where = [f"{int(row[c]):,} in {ORIGINS[o]}" for o, c in COLUMNS.items() if row[c]]
    detail = f"in {plural(int(row['runs']), 'run')}" if total else f"none in {plural(int(row['known_runs']), 'run')}"
    detail += f"; {', '.join(where)}" if where else ""
    if kind == "failure" and total:
        detail += f"; {int(row['ran_eagerly']):,} of the frames then ran eagerly"
        if row["eagerly_unknown"]:
            detail += f" ({int(row['eagerly_unknown']):,} not known: the log does not say whether errors were suppressed)"
    if unknown:
        detail += f"; unknown in {plural(unknown, 'run')}"
    col.metric(label, f"{int(total):,}", help=detail)
    if total or unknown:
        col.caption(detail)
with st.expander("What is counted"):
    st.markdown("Graph breaks are counted as Dynamo counts them (its `counters[\"graph_break\"]`, the benchmark "
                "harness's `graph_breaks`), every one wherever it happened: the model's own code, an installed "
                "package (a transformers or timm model), torch or the standard library is a breakdown, not a "
                "filter. *Uncounted breaks* split a frame but Dynamo files them as unimplemented, not as graph "
                "breaks: a data-dependent branch of the compiled frame itself, or a break it could not resume "
                "from. A frame that could not handle its break fell back to eager: it is a failure. A cause is "
                "Dynamo's graph-break id (gbNNNN; older releases' messages mapped onto it), a recompile's the kind "
                "of guard that failed, so one cause groups across releases.")
unknown_runs = int(totals["unknown_runs"].max())
if all_unknown:
    st.info(f"Unknown, not 0: none of these {plural(unknown_runs, 'run')} ({filters.describe()}) has a file that "
            "records graph breaks, recompiles, restarts or failures (a profile, a TORCH_COMPILE_DEBUG tree or "
            "torch-spyre files alone).")
elif unknown_runs:
    markers = [k for k in MARKERS if k in counts.index]
    st.caption("Sums over the runs whose files record each count; –: unknown in every run in view. Counts are "
               "unknown in a run holding only a profile, a TORCH_COMPILE_DEBUG tree or torch-spyre files"
               + (", and some in logs of releases that write no record of them (the *Why … unknown* kinds below)."
                  if markers else "."))
if counts.empty:
    if unknown_runs == 0 and not totals["total"].fillna(0).any():
        st.success(f"No graph breaks, recompiles, restarts or failures were recorded in the runs in view "
                   f"({filters.describe()}).")
    elif not all_unknown:
        st.info(f"No graph break, recompile, restart or failure of the runs in view ({filters.describe()}) has a "
                "cause recorded: their counts are unknown, or the benchmark harness's alone.")
    chrome.show_sql("dashboard/break_totals", "dashboard/break_counts")
    st.stop()

KINDS_AND_MARKERS = KINDS | MARKERS
present = [k for k in KINDS_AND_MARKERS if k in counts.index]
state.from_url("breaks_kind", "kind", present, default=present[0])
kind = st.segmented_control("Kind", present, format_func=cells.labelled(KINDS_AND_MARKERS), key="breaks_kind") or present[0]
state.to_url("kind", kind)
state.from_url("breaks_origin", "origin", list(ORIGINS))
origin = st.segmented_control("Where", list(ORIGINS), format_func=cells.labelled(ORIGINS), key="breaks_origin",
                              help="only the events that happened there; none picked: everywhere")
state.to_url("origin", origin)
reasons = data.run("dashboard/break_reasons", **f, kind=kind, origin=origin)
st.subheader(f"{KINDS_AND_MARKERS[kind]}: causes ranked")
if reasons.empty:
    st.info(f"No {KINDS_AND_MARKERS[kind].lower()} in {ORIGINS.get(origin, 'any code')} in the runs in view.")  # type: ignore[arg-type]
    st.stop()
event = cells.table(reasons, on_select="rerun", selection_mode="single-row", key="breaks_reasons_table")
chrome.show_sql("dashboard/break_totals", "dashboard/break_counts", "dashboard/break_reasons")

rows = event.selection.rows if event else []
if rows:
    st.session_state["breaks_reason"] = reasons.iloc[rows[0]]["cause"]
choices = reasons["cause"].drop_duplicates().tolist()
state.from_url("breaks_reason", "cause", choices)
if st.session_state.get("breaks_reason") not in choices:
    st.session_state["breaks_reason"] = choices[0]
shown = dict(zip(reasons["cause"], reasons["reason"], strict=False))
cause = st.selectbox("Drill into the runs of", choices, key="breaks_reason",
                     format_func=lambda c: c if shown.get(c) == c else f"{c}: {shown.get(c)}")
state.to_url("cause", cause)
runs = data.run("dashboard/break_runs", **f, kind=kind, cause=cause)
# the user line of each event, opened in the provenance viewer: which kernels that line became
runs["viewer"] = [viewer_url(r.run_id, line=f"{r.user_file}:{int(r.user_line)}")
                  if isinstance(r.user_file, str) and pd.notna(r.user_line) else None for r in runs.itertuples()]
cells.table(runs, column_config={"viewer": VIEWER_COLUMN})
labels = {r.run_id: f"{cells.or_missing(r.model, 'model unknown')} · {cells.or_missing(r.compiler_version, 'unknown version')}"
                    f" · {r.run_id}" for r in runs.itertuples()}
run_id = st.selectbox("Run", list(labels), format_func=cells.labelled(labels), key="breaks_run", index=None,
                      placeholder="choose a run to open")
open_run_button(run_id, "breaks_open")
with st.expander("Full reason text"):
    st.code(runs["reason"].iloc[0] if len(runs) else cause, language=None, wrap_lines=True)
chrome.show_sql("dashboard/break_runs")
