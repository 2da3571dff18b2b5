"""Like for like: the runs each selector picks, grouped by workload, and the workloads on both
sides. A label both selectors name is the compared variable, not part of the workload."""

from __future__ import annotations

from collections import defaultdict
from typing import TypeAlias

from inductor_warehouse.analysis.canned_rows import Reader, Row
from inductor_warehouse.analysis.selectors import Selector, SelectorError, nearest_values, select_runs, workload_labels
from inductor_warehouse.analysis.words import model_key

Groups: TypeAlias = dict[str, list[Row]]  # workload key -> its runs (compare/runs rows)
Dims: TypeAlias = dict[str | None, list[str]]  # model (NULL for none) -> the labels its workloads are shown with


def paired_groups(con: Reader, sel_b: Selector, sel_h: Selector, model: str | None,
                  pair_on: tuple[str, ...] | None) -> tuple[Groups, Groups, list[str], Dims, tuple[list[Row], list[Row]]]:
    """The runs each selector picks, grouped by workload: (base groups, head groups, the workloads on
    both sides, the labels the workloads are told apart by, each side's runs of harness results
    alone). A label both selectors name is the compared variable, not part of the workload; runs both
    picked by id pair by model. Runs of benchmark-harness results alone (compare/runs' harness_only)
    compiled nothing: they are no workload here (analysis/hud.py pairs their rows)."""
    keys = tuple(pair_on) if pair_on is not None else workload_labels(con)
    if "run" in sel_b.params and "run" in sel_h.params:
        keys = ()
    both = set(sel_b.labels) & set(sel_h.labels) | ({"device"} & set(sel_b.params) & set(sel_h.params))
    keys = tuple(k for k in keys if k not in both)
    # a run of harness results alone is named after its job, not the models its rows measured: with
    # --model it is picked whatever its name, and its rows of that model compared. So each side's runs
    # are read once, without the model, and the model's taken from them as compare/runs' filter takes them
    held = [select_runs(con, sel_b, None, keys), select_runs(con, sel_h, None, keys)]
    runs_b, runs_h = (_of_model(runs, model) for runs in held)
    holders = ([r for r in held[0] if r["harness_only"]], [r for r in held[1] if r["harness_only"]])
    runs_b, runs_h = [r for r in runs_b if not r["harness_only"]], [r for r in runs_h if not r["harness_only"]]
    for sel, runs, side in ((sel_b, runs_b, holders[0]), (sel_h, runs_h, holders[1])):
        if not runs and not side:
            raise SelectorError(f"selector {sel.text!r} picks no runs" + (f" of model {model}" if model else "")
                                + "; " + nearest_values(con, sel, model) + " (`iwh runs` lists every run)")
    dims = _shown_labels(runs_b + runs_h, keys)
    groups_b, groups_h = _group(runs_b, dims), _group(runs_h, dims)
    common = sorted(set(groups_b) & set(groups_h), key=lambda w: _sort_key(groups_b[w]))
    return groups_b, groups_h, common, dims, holders


def _of_model(runs: list[Row], model: str | None) -> list[Row]:
    """The runs of `model` (a comma-separated list, as picked_runs' models filter reads it); all without one."""
    if model is None:
        return runs
    models = model.split(",")
    return [r for r in runs if r["model"] in models]


def _label(run: Row, key: str) -> str | None:
    """A workload part of a run: device and rank are its columns (a label where the column is NULL),
    as workload_key (views/12_workloads.sql) reads them."""
    value = run.get(key) if key in ("device", "rank") else None
    if value is None:
        value = run["labels"].get(key)
    return None if value is None else str(value)


def _shown_labels(runs: list[Row], keys: tuple[str, ...]) -> Dims:
    """Model -> the workload labels that tell its workloads apart: those with more than one value
    (a missing label is a value) among its runs. Workloads are shown with these only."""
    seen: defaultdict[tuple[str | None, str], set[str | None]] = defaultdict(set)
    for r in runs:
        for k in keys:
            seen[(r["model"], k)].add(_label(r, k))
    out: defaultdict[str | None, list[str]] = defaultdict(list)
    for (m, k), values in sorted(seen.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        if len(values) > 1:
            out[m].append(k)
    return out


def _group(runs: list[Row], dims: Dims) -> Groups:
    """Workload key -> its runs, each with `config`: its labels that tell it apart from the model's others."""
    out: defaultdict[str, list[Row]] = defaultdict(list)
    for r in runs:
        r["config"] = {k: _label(r, k) for k in dims.get(r["model"], ()) if _label(r, k) is not None}
        out[r["workload"]].append(r)
    return out


def workload_text(runs: list[Row]) -> str:
    return model_key(runs[0]["model"], runs[0]["config"])


def _sort_key(runs: list[Row]) -> tuple[str, list[tuple[str, str]]]:
    return (runs[0]["model"] or "", sorted(runs[0]["config"].items()))
