"""What a page leaves out because it is unknown (NULL), said in words: which runs, and why their
files cannot tell it. A chart drops an unknown point, never draws it as 0 or as a part for the whole."""

from __future__ import annotations

import pandas as pd

from inductor_warehouse.analysis.words import plural
from inductor_warehouse.dashboards import cells

# why a run's files leave a metric of dashboard/trend_points unknown (views/20_run_metrics.sql and
# views/15_run_rollups_of.sql say the rules)
WHY = {
    "fusion_rate": "no debug tree or trace log of the run holds its graphs (a profile, harness results alone)",
    "kernels": "no file of the run holds its generated code (a profile, harness results alone)",
    "failures": "only a TORCH_TRACE log records compile failures",
    "graph_breaks": "no file of the run can count them (a profile, a debug tree alone, torch-spyre files, "
                    "TORCH_LOGS without the graph_breaks logger; a trace of 2.3 or 2.4 whose restarted frame has "
                    "no compilation_metrics)",
    "recompiles": "no file of the run records them (a profile, a debug tree alone; a trace log of 2.3 or 2.4 "
                  "writes no recompile record, and no TORCH_LOGS told them)",
    "compile_s": "no file of the run records its whole compile time: no TORCH_TRACE log, a trace of 2.3 (it "
                 "writes no compilation_metrics), or a 2.4 training run (2.4 writes no record of the backward's "
                 "compile)",
}
NAMED = 6  # releases listed by name: the rest are counted


def left_out(runs: pd.DataFrame, metric: str) -> str | None:
    """A sentence naming the runs of `runs` (dashboard/trend_points rows) whose `metric` is unknown,
    by release and workload, and why; None when every run has it."""
    unknown = runs[runs[metric].isna()]
    if unknown.empty:
        return None
    by_version = {}
    for version, group in unknown.groupby(unknown["compiler_version"].fillna("unknown version"), sort=False):
        by_version[version] = sorted({cells.workload_name(w) for w in group["workload"].fillna("")})
    order = sorted(by_version, key=lambda v: unknown.loc[unknown["compiler_version"].fillna("unknown version") == v,
                                                         "version_rank"].min())
    named = "; ".join(f"{v}: {', '.join(by_version[v])}" for v in order[:NAMED])
    more = f"; and {plural(len(order) - NAMED, 'other version')}" if len(order) > NAMED else ""
    return (f"{plural(len(unknown), 'run')} ({named}{more}): "
            f"{WHY.get(metric, 'no file of the run records it')}.")


def seconds(value) -> str:
    """A total in seconds for a table cell, `unknown` where the files miss a part of it."""
    if value is None or pd.isna(value):
        return "unknown"
    return f"{value:.3f}".rstrip("0").rstrip(".")
