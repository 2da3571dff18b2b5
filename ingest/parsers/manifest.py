"""manifest.json beside a run's artifacts: {"model": ..., any other keys}.

`model` names the run; every other scalar key becomes a label (nested values are not labels:
they are counted and left out).

A zoo run's name (`<model>__<mode>__<dtype>__<variant>`, zoo/run.py) is the same facts spelled in
a folder's or a file's name: `run_name` reads it, for zoo/ and for runs nobody named.
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


# the zoo's words for a mode and a dtype (zoo/worker.py), which the warehouse spells workloads with
# (views/12_workloads.sql's workload_value); a name whose parts are other words is no run name
RUN_NAME_MODES = ("infer", "train")
RUN_NAME_DTYPES = ("fp32", "bf16", "fp16")


def run_name(name: str) -> tuple[str, dict[str, Label]] | None:
    """(model, {mode, dtype, variant}) of a name of the form `<model>__<mode>__<dtype>__<variant>`,
    else None. The model is whatever precedes the last three parts, so a model may itself hold `__`."""
    parts = name.rsplit("__", 3)
    if len(parts) != 4 or not all(parts) or parts[1] not in RUN_NAME_MODES or parts[2] not in RUN_NAME_DTYPES:
        return None
    model, mode, dtype, variant = parts
    return model, {"mode": mode, "dtype": dtype, "variant": variant}


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
