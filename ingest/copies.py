"""Copies of stored runs under other names: a run id is a hash of a run's files, so the same files
found in another folder are the same run. Where this ingest names it otherwise (another model or
other labels: `--label`, a folder's words) storing it would take the stored run over and lose the
names it was stored under; it is left out instead, and the ingest says so (`iwh ingest --force`
stores it under the new names). A copy under the same names is a moved folder: stored from there. An unchanged folder is not read
again, so names an ingest gives it (`--label`, `--model`) are not applied either: the ingest says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import duckdb
import orjson

from inductor_warehouse.ingest.convert import Loaded
from inductor_warehouse.ingest.parsers.manifest import Label


@dataclass(frozen=True)
class StoredCopy:
    source_path: str  # the folder this ingest found the files in
    run_id: str
    stored_path: str  # the folder the run is stored from
    stored: dict[str, Any]  # the names that differ, as stored: `model` and labels (None: absent)
    given: dict[str, Any]  # the same names as this ingest gave them

    def message(self) -> str:
        def named(names: dict[str, Any]) -> str:
            return " ".join(f"{k}={v}" for k, v in sorted(names.items()) if v is not None) or "without them"

        if self.source_path == self.stored_path:
            return (f"{self.source_path} is unchanged since run {self.run_id} was stored from it with "
                    f"{named(self.stored)}: not read again, so not stored with {named(self.given)}; that run keeps its "
                    f"names (`iwh ingest --force` of {self.source_path} stores it with the names given instead)")
        return (f"{self.source_path} holds the same files as run {self.run_id}, stored from {self.stored_path} "
                f"with {named(self.stored)}: not stored again with {named(self.given)}; that run keeps its names "
                f"(`iwh ingest --force` of {self.source_path} stores it from there with the names given instead)")


def copies_of_stored(con: duckdb.DuckDBPyConnection, batch: list[Loaded]) -> list[tuple[Loaded, StoredCopy]]:
    """The batch's runs whose files a run stored from another folder holds under another model or
    other labels."""
    if not batch:
        return []
    stored = {run_id: (path, model, labels) for run_id, path, model, labels in con.execute(
        "SELECT run_id, source_path, model, labels::VARCHAR FROM runs WHERE run_id IN (SELECT unnest(?))",
        [[d.run["run_id"] for d in batch]]).fetchall()}
    out = []
    for d in batch:
        found = stored.get(d.run["run_id"])
        if found is None or found[0] == d.run["source_path"]:
            continue
        path, model, labels = found
        now = {"model": d.run.get("model"), **_labels(d)}
        was = _stored_names(model, labels)
        copy = _named_otherwise(d.run["source_path"], d.run["run_id"], path, was, now, was.keys() | now.keys())
        if copy:
            out.append((d, copy))
    return out


def unchanged_named_otherwise(con: duckdb.DuckDBPyConnection, source_paths: list[str], model: str | None,
                              labels: Mapping[str, Label] | None) -> list[StoredCopy]:
    """The unchanged runs of these folders (skipped unread) stored under another model or other values of
    the labels this ingest gives (`--model`, `--label`): the names given are not applied to them."""
    if not source_paths or not (model or labels):
        return []
    given = {**({"model": model} if model else {}), **orjson.loads(orjson.dumps(dict(labels or {})))}
    out = []
    for path, run_id, stored_model, stored_labels in con.execute(
            "SELECT source_path, run_id, model, labels::VARCHAR FROM runs WHERE source_path IN (SELECT unnest(?)) "
            "ORDER BY source_path, run_id", [source_paths]).fetchall():
        copy = _named_otherwise(path, run_id, path, _stored_names(stored_model, stored_labels), given, given.keys())
        if copy:
            out.append(copy)
    return out


def _stored_names(model: str | None, labels: str | None) -> dict[str, Any]:
    """A stored run's names: its model and its labels (the column's JSON text)."""
    return {"model": model, **(orjson.loads(labels) if labels else {})}


def _named_otherwise(source_path: str, run_id: str, stored_path: str, was: dict[str, Any], now: dict[str, Any],
                     names: Iterable[str]) -> StoredCopy | None:
    """The copy, where any of `names` differs between the stored run (`was`) and this ingest (`now`)."""
    differ = sorted(k for k in names if was.get(k) != now.get(k))
    if not differ:
        return None
    return StoredCopy(source_path, run_id, stored_path, {k: was.get(k) for k in differ}, {k: now.get(k) for k in differ})


def _labels(d: Loaded) -> dict[str, Any]:
    """The labels the run would be stored with, as the warehouse holds them (JSON)."""
    text = d.tables["runs"].column("labels")[0].as_py()
    return orjson.loads(text) if text else {}
