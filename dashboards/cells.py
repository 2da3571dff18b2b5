"""Values and tables as people read them on a page: numbers, shares, workload names, labels for
widgets, artifact text made safe for markdown, the highlighter of a kernel's source."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

import pandas as pd
import streamlit as st

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def number(value) -> str:
    """A metric's value for people: thousands separated, fractions to 3 places, '–' when unknown."""
    if isinstance(value, str):
        return value
    if value is None or pd.isna(value):
        return "–"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:.3f}"
    return f"{int(value):,}"


# columns that hold a fraction of 1, shown as a percentage
_SHARES = ("_share", "_hit_rate", "saved_share")
_RIGHT = st.column_config.TextColumn(alignment="right")
_NUMBER_TEXT = re.compile(r"^[-+]?[0-9][0-9,]*(\.[0-9]+)?%?$")


def _text(col: str, value, integer: bool) -> str:
    if value is None or pd.isna(value):
        return ""
    if str(col).endswith(_SHARES):
        return f"{value:.1%}"
    if integer:
        return f"{int(value):,}"
    return f"{value:,.1f}" if abs(value) >= 1000 else (f"{value:.4f}".rstrip("0").rstrip(".") or "0")


def readable(frame: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """A query's frame as people read it, and the column settings that go with it: counts as
    integers (a sum with a NULL in it came back as floats), shares as percentages, and NULL as an
    empty cell (a table shows `None` for a missing value): a numeric or date column with a NULL
    becomes text, numbers aligned right as numbers are."""
    out, config = frame.copy(), {}
    for col in out.columns:
        values = out[col]
        if len(values) and values.isna().all():  # nothing known in this column (an object column of NULLs)
            out[col] = [""] * len(values)
            continue
        if pd.api.types.is_datetime64_any_dtype(values):
            if values.isna().any():
                out[col] = ["" if pd.isna(v) else f"{v:%Y-%m-%d %H:%M:%S}" for v in values]
            continue
        if values.dtype == object and values.dropna().map(
                lambda v: isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)).all():
            values = pd.to_numeric(values)  # numbers a NULL left in an object column
        if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
            text = pd.api.types.is_string_dtype(values) and not isinstance(values.dtype, pd.CategoricalDtype)
            if text and values.isna().any() and values.map(lambda v: v is None or isinstance(v, (str, float))).all():
                out[col] = values.astype(object).where(values.notna(), "")
            if text and values.notna().any() and values.dropna().map(
                    lambda v: isinstance(v, str) and _NUMBER_TEXT.match(v) is not None).all():
                config[col] = _RIGHT  # numbers as text (`+3`, `-11.9%`): aligned as numbers are
            continue
        known = values.dropna()
        integer = pd.api.types.is_integer_dtype(values) or (
            len(known) > 0 and (known == known.round()).all() and not str(col).endswith(("_s", "_us", "_ms"))
            and str(col) != "fusion_rate")
        if values.isna().any() or str(col).endswith(_SHARES):
            out[col] = [_text(col, v, integer) for v in values]
            config[col] = _RIGHT
        elif integer:
            out[col] = values.astype("int64")
    return out, config


# column types that draw a number themselves: given text (readable's "" for a NULL), they mark the cell
# as an error ("The value cannot be interpreted as a number"); given NaN, they draw an empty cell
_NUMERIC_COLUMNS = ("progress", "number")


def table(frame: pd.DataFrame, column_config: dict | None = None, **kwargs):
    """st.dataframe of `readable(frame)`: what every page's tables show. A column the caller gives a
    numeric column type (a ProgressColumn) keeps its numbers, NULL as an empty cell."""
    shown, config = readable(frame)
    for col, setting in (column_config or {}).items():
        if col in frame.columns and isinstance(setting, dict) and \
                setting.get("type_config", {}).get("type") in _NUMERIC_COLUMNS:
            shown[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
            config.pop(col, None)
    return st.dataframe(shown, hide_index=True, width="stretch", column_config=config | (column_config or {}),
                        **kwargs)


_WORKLOAD = re.compile(r"^(.*?)(?: \[(.*)\])?$")


def workload_name(workload: str) -> str:
    """`mlp [batch=8 device=cuda dtype=fp32 mode=train variant=default]` -> `mlp · cuda · train · fp32 ·
    default · batch 8`: a workload key (views/12_workloads.sql) in fewer characters."""
    model, labels = _WORKLOAD.match(workload).groups()  # type: ignore[union-attr]  # it matches any text
    values = dict(kv.split("=", 1) for kv in (labels or "").split(" ") if "=" in kv)
    values.setdefault("device", "device unknown")  # a run killed early, or written by another tool
    parts = [model] + [values.pop(k) for k in ("device", "mode", "dtype", "variant") if k in values]
    return " · ".join(parts + [f"{k} {v}" for k, v in sorted(values.items())])


def or_missing(value, missing: str = "unknown") -> str:
    """A label part for people: the value, or a word for a NULL (NaN in a frame): runs killed early
    or written by older tools lack devices, versions and dates."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return missing
    return str(value)


def labelled(labels: Mapping[Any, str]) -> Callable[[Any], str]:
    """A widget's `format_func` showing each option by its label in `labels`."""
    return lambda option: labels.get(option, str(option))


def plain(text) -> str:
    """Artifact text (model names, paths, ids) for a markdown element: every markup character escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))


def prose(text) -> str:
    """A sentence the command line also prints, for a markdown element: its `backticked` parts (a
    command, a key) shown as code, the rest escaped as `plain` escapes it. A backtick left without
    its pair is text."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an odd number of backticks: the last one has no pair
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    return "".join(plain(p) if i % 2 == 0 else f"`{p}`" if p.strip() else plain(f"`{p}`")
                   for i, p in enumerate(parts))


def code_language(source: str | None) -> str:
    """The highlighter for a kernel's source, told by its content: C++ kernels start with includes,
    Spyre kernel specs are JSON, Triton kernels are Python."""
    head = (source or "").lstrip()
    if head.startswith(("#include", "extern ")):
        return "cpp"
    return "json" if head.startswith("{") else "python"
