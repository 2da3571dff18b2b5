"""The Inductor config each side's runs recorded, and how the two differ key by key."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, TypeAlias

import orjson

from inductor_warehouse.analysis.canned_rows import Reader, Row, run_query

# an Inductor config as a run recorded it (inductor_configs.text): a JSON object of settings, any values
Config: TypeAlias = dict[str, Any]


def configs_of(con: Reader, groups: list[list[Row]]) -> dict[str, Config]:
    """Config hash -> the parsed Inductor config, for the first run of each group that recorded one
    (what config_diff reads): a few texts, however many runs the sides hold."""
    hashes = sorted({h for h in (first_config(g) for g in groups) if h})
    rows = run_query(con, "compare/inductor_configs", hashes=",".join(hashes)) if hashes else []
    return {r["config_hash"]: orjson.loads(r["text"]) for r in rows}


def first_config(runs: list[Row]) -> str | None:
    return next((r["inductor_config_hash"] for r in runs if r.get("inductor_config_hash")), None)


@dataclass(frozen=True)
class ConfigDiff:
    changed: frozenset[str]  # keys on both sides whose values differ
    added: frozenset[str]    # keys the head's config has and the base's lacks
    removed: frozenset[str]


# A value naming a file or folder (a package's data dir, the working directory) differs by where the
# run or its virtualenv lay, not by setting: its last part is what was chosen.
_ABSOLUTE_PATH = re.compile(r"^/(?:[^/]+/)*")


def config_diff(base: list[Row], head: list[Row], configs: dict[str, Config]) -> ConfigDiff:
    """The Inductor config of the first run of each side that recorded one, key by key.
    `configs`: config hash -> parsed config (`configs_of`)."""
    b, h = configs.get(first_config(base) or ""), configs.get(first_config(head) or "")
    if b is None or h is None:
        return ConfigDiff(frozenset(), frozenset(), frozenset())
    return ConfigDiff(
        changed=frozenset(k for k in b.keys() & h.keys() if _setting(b[k]) != _setting(h[k])),
        added=frozenset(h.keys() - b.keys()),
        removed=frozenset(b.keys() - h.keys()),
    )


def _setting(value: object) -> object:
    return _ABSOLUTE_PATH.sub(".../", value) if isinstance(value, str) else value
