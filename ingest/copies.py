"""Copies of stored runs under other names: a run id is a hash of a run's files, so the same files
found in another folder are the same run. Where this ingest names it otherwise (another model or
other labels: `--label`, a folder's words) storing it would take the stored run over and lose the
names it was stored under; it is left out instead, and the ingest says so (`iwh ingest --force`
stores it under the new names). A copy under the same names is a moved folder: stored from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb
import orjson

from inductor_warehouse.ingest.convert import Loaded


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
        was = {"model": model, **(orjson.loads(labels) if labels else {})}
        now = {"model": d.run.get("model"), **_labels(d)}
        differ = sorted(k for k in was.keys() | now.keys() if was.get(k) != now.get(k))
        if differ:
            out.append((d, StoredCopy(d.run["source_path"], d.run["run_id"], path,
                                      {k: was.get(k) for k in differ}, {k: now.get(k) for k in differ})))
    return out


def _labels(d: Loaded) -> dict[str, Any]:
    """The labels the run would be stored with, as the warehouse holds them (JSON)."""
    text = d.tables["runs"].column("labels")[0].as_py()
    return orjson.loads(text) if text else {}
