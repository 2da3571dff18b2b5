"""JSON values of a TORCH_TRACE record made one Python type per column, so a bulk load never sees a mix."""

from __future__ import annotations

import orjson


def as_int(v: object) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return None


def as_float(v: object) -> float | None:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    return None


def as_str(v: object) -> str | None:
    if v is None or isinstance(v, str):
        return v
    return orjson.dumps(v).decode()


def as_bool(v: object) -> bool | None:
    return v if isinstance(v, bool) else None
