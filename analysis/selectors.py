"""What `--base` and `--head` pick: selectors read from text, the runs they select, and
why one picks nothing, in the values that do exist."""

from __future__ import annotations

import difflib
from collections import defaultdict
from dataclasses import dataclass

import orjson

from inductor_warehouse.analysis.canned_rows import Reader, Row, connection, run_query
from inductor_warehouse.schema.releases import release_parts


# selector words that name a run column; any other key is a label
COLUMN_KEYS = {"compiler": "compiler", "compiler_version": "compiler", "run": "run", "run_id": "run",
               "device": "device", "backend": "backend", "model": "model"}


class SelectorError(ValueError):
    """A selector that cannot be read or picks nothing; the message says what exists."""


@dataclass(frozen=True)
class Selector:
    text: str
    params: dict[str, str]  # run columns (COLUMN_KEYS' values) -> value
    labels: dict[str, str]

    @property
    def keys(self) -> set[str]:
        return set(self.params) | set(self.labels)


def parse_selector(text: str) -> Selector:
    """`compiler=2.13.0+cpu`, `variant=default`, `mode=train,dtype=fp32`, a run id, or a mix."""
    params: dict[str, str] = {}
    labels: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        if not sep:
            params["run"] = part
            continue
        key, value = key.strip(), value.strip()
        if not key or not value:
            raise SelectorError(f"selector part {part!r} is not key=value")
        if key in COLUMN_KEYS:
            params[COLUMN_KEYS[key]] = value
        else:
            labels[key] = value
    if not params and not labels:
        raise SelectorError(f"empty selector {text!r}: give compiler=V, a label k=v or a run id")
    return Selector(text, params, labels)


def same_selection(a: str, b: str) -> bool:
    """Two selectors that say the same (in any order of their parts): a compare of them compares a
    side with itself."""
    try:
        sa, sb = parse_selector(a), parse_selector(b)
    except SelectorError:
        return False
    return (sa.params, sa.labels) == (sb.params, sb.labels)


def select_runs(con: Reader, selector: Selector, model: str | None = None,
                pair_on: tuple[str, ...] | None = None) -> list[Row]:
    """The runs a selector picks, with their metrics and `workload` over the `pair_on` labels
    (None: the workload labels of views/12_workloads.sql)."""
    params = dict(selector.params)
    if model is not None:
        params["model"] = model
    if selector.labels:
        params["labels"] = orjson.dumps(selector.labels).decode()
    if (keys := pair_on_param(con, pair_on)) is not None:
        params["pair_on"] = keys
    rows = run_query(con, "compare/runs", **params)
    for r in rows:
        r["labels"] = orjson.loads(r["labels"]) if r["labels"] else {}
    return rows


def pair_on_param(con: Reader, pair_on: tuple[str, ...] | None) -> str | None:
    """A query's `pair_on` for these labels: None for the workload labels themselves, whose key the
    queries read from each run's rollup rather than spell again for every run."""
    return ",".join(pair_on) if pair_on is not None and set(pair_on) != set(workload_labels(con)) else None


def workload_labels(con: Reader) -> tuple[str, ...]:
    """The labels that name a workload (views/12_workloads.sql's workload_labels())."""
    return tuple(r[0] for r in connection(con).execute("SELECT unnest(workload_labels())").fetchall())


def nearest_values(con: Reader, sel: Selector, model: str | None) -> str:
    """Why a selector picks nothing, in the values that do exist: for each part that matches no run
    on its own, the existing values nearest to it; when every part matches alone, that only their
    combination is empty."""
    by_key: defaultdict[str, list[str]] = defaultdict(list)
    for r in run_query(con, "compare/selector_values"):
        by_key[r["key"]].append(r["value"])
    parts = [(k, v) for k, v in sel.params.items() if k != "run"] + list(sel.labels.items())
    if model is not None:
        parts.append(("model", model))
    hints: list[str] = []
    for key, value in parts:
        one = Selector(f"{key}={value}", {key: value} if key in COLUMN_KEYS.values() else {},
                       {} if key in COLUMN_KEYS.values() else {key: value})
        if select_runs(con, one):
            continue
        known = by_key.get(key, [])
        if not known:
            hints.append(f"no run has a {key!r}" + (" label" if key not in COLUMN_KEYS.values() else ""))
        else:
            near = _nearest_versions(value, known) if key == "compiler" else \
                difflib.get_close_matches(value, known, n=5, cutoff=0.0)
            hints.append(f"no run has {key}={value}; nearest: {', '.join(near)}")
    if "run" in sel.params and not select_runs(con, Selector(sel.text, {"run": sel.params["run"]}, {})):
        hints.append(f"no run id starts with {sel.params['run']!r}")
    if not hints:
        hints.append("each part matches runs on its own, but no run matches all of them")
    return "; ".join(hints)


def _nearest_versions(wanted: str, known: list[str], n: int = 5) -> list[str]:
    """Versions nearest a wanted one: most leading parts in common, then the closest next part."""
    want = release_parts(wanted)

    def distance(v: str) -> tuple[int, int, str]:
        have = release_parts(v)
        common = next((i for i, (a, b) in enumerate(zip(want, have, strict=False)) if a != b), min(len(want), len(have)))
        gap = abs(want[common] - have[common]) if common < min(len(want), len(have)) else 0
        return (-common, gap, v)

    return sorted(known, key=distance)[:n]
