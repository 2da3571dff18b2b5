"""What a page leaves out because it is unknown (NULL), said in words: which runs, and why their
files cannot tell it. A chart drops an unknown point, never draws it as 0 or as a part for the whole."""

from __future__ import annotations

import pandas as pd

from inductor_warehouse.analysis.words import plural
from inductor_warehouse.dashboards import cells
from inductor_warehouse.schema.reference import unknown_when

# a metric of dashboard/trend_points -> the run_rollups column whose NULL leaves it unknown: that
# column's comment (schema/comments.sql) says why, for the reference and for the pages alike
UNKNOWN_OF = {"fusion_rate": "pre_fusion_nodes", "kernels": "kernel_count", "failures": "failures",
              "graph_breaks": "graph_breaks", "recompiles": "recompiles", "compile_s": "total_s"}
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
            f"{why(metric)}.")


def why(metric: str) -> str:
    """Why a run's files leave `metric` of dashboard/trend_points unknown."""
    column = UNKNOWN_OF.get(metric)
    return (unknown_when("run_rollups", column) if column else None) or "no file of the run records it"


def seconds(value) -> str:
    """A total in seconds for a table cell, `unknown` where the files miss a part of it."""
    if value is None or pd.isna(value):
        return "unknown"
    return f"{value:.3f}".rstrip("0").rstrip(".")
