"""manifest.json beside a run's artifacts: {"model": ..., any other keys}.

`model` names the run; every other scalar key becomes a label (nested values are not labels:
they are counted and left out).
"""

from __future__ import annotations

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
    parsed.facts["labels"] = labels
    return parsed
