"""manifest.json beside a run's artifacts: {"model": ..., any other keys}.

`model` names the run; every other scalar key becomes a label (nested values are not labels:
they are counted and left out).
"""

from __future__ import annotations

from datetime import datetime
from typing import TypeAlias

from inductor_warehouse.ingest.rows import Parsed

# a label's value, as a manifest may hold it (the command line's are strings)
Label: TypeAlias = str | int | float | bool | None


def parse_manifest(data: bytes) -> Parsed:
    parsed = Parsed()
    doc = parsed.json_object(data, "manifest")
    if doc is None:
        return parsed
    model = doc.get("model")
    if model is not None:
        parsed.facts["model"] = str(model)
    labels: dict[str, Label] = {}
    for key, value in doc.items():
        if key == "model":
            continue
        if value is None or isinstance(value, (str, int, float, bool)):
            labels[key] = value
        else:
            parsed.counters["manifest: non-scalar key left out"] += 1
    if "started_at" in labels and start_time(labels["started_at"]) is None:
        parsed.problem(f"manifest `started_at` {labels['started_at']!r} is not an ISO 8601 time: kept as a label, "
                       "not as the run's start", severity="warning")
    parsed.facts["labels"] = labels
    return parsed


def start_time(value: Label) -> str | None:
    """A `started_at` label as the run's start: an ISO 8601 text (a trailing Z for UTC too), written
    out in the extended form the warehouse reads (Python also reads `20240719T020000`, DuckDB does
    not), else None (a number could be seconds or milliseconds since the epoch: not guessed)."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value).isoformat()
    except ValueError:
        return None
