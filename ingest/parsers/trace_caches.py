"""Readers of cache lookups (cache_events): the FX graph, AOTAutograd, precompile and Dynamo caches'
artifacts, and each Triton kernel's autotune cache (`triton_kernel_info`, with its triton_kernels row).

Cache lookups are logged as artifacts, across releases: `fx_graph_cache_{hit,miss,bypass}` (2.6+),
`aotautograd_cache_{hit,miss,bypass}` (2.7+), `*_cache_hash` (2.4/2.5: the outcome, if any, is in
the payload's cache_state), `fx_graph_bundled_cache_hit` (2.8+), `precompile_cache_bypass`,
`dynamo_cache_*` (2.10+). The payload's cache_state wins over the name (names were edited by hand
in a tlparse test log, payloads not).

A graph's `cache_state` is its FX graph cache outcome, worked out here (`graph_cache_states`) and
nowhere else in the parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from inductor_warehouse.ingest.parsers.compile_ids import without_attempt
from inductor_warehouse.ingest.parsers.trace_log import TraceLog
from inductor_warehouse.ingest.parsers.trace_values import as_float, as_int, as_str
from inductor_warehouse.ingest.rows import CacheEventRow, Json, Parsed

SOURCE = "torch_trace"
# the names of cache lookup artifacts: (cache, what happened)
CACHE_ARTIFACT = re.compile(r"^(fx_graph_bundled|fx_graph|aotautograd|precompile|dynamo)_cache_(\w+)$")
_CACHE_NAMES = {"fx_graph": "fx_graph", "fx_graph_bundled": "bundled_fx_graph", "aotautograd": "aot_autograd",
                "precompile": "precompile", "dynamo": "dynamo"}
_GRAPH_CACHES = ("fx_graph", "bundled_fx_graph")  # the caches that serve a whole graph's code
_OUTCOME_WORDS = {"hit", "miss", "bypass", "disabled"}
# a compile id's lookups: (cache, outcome, local|remote) -> how many
LookupCounts: TypeAlias = dict[tuple[str, str, str], int]
# compilations' lookup counts: (cache, outcome, local|remote) -> the column that counts them
_LOOKUP_COUNTS = {(cache, outcome, where): f"{prefix}_{where}_{word}"
                  for cache, prefix in (("fx_graph", "fx_cache"), ("aot_autograd", "aot_cache"))
                  for outcome, word in (("hit", "hits"), ("miss", "misses")) for where in ("local", "remote")}


@dataclass
class Caches:
    """What the cache readers keep: each compile id's lookup counts by (cache, outcome, local|remote)
    from its metrics, and the graph each compile id's latest output code made (trace_graphs.Graphs')."""
    log: TraceLog
    latest_graph: dict[str | None, str]
    counts: dict[str | None, LookupCounts] = field(default_factory=dict)
    # compile id -> an FX graph lookup logged without its outcome (2.4's fx_graph_cache_hash) and the
    # graph of the compile's latest code then: held until what follows it says the outcome
    unsettled: dict[str | None, tuple[CacheEventRow, str | None]] = field(default_factory=dict)


def read_cache(caches: Caches, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    # an FX graph cache lookup is logged after the output code it gave (hit) or made (miss)
    name = meta["name"]
    payload = caches.log.json(data, lineno, name) if data else None
    row = cache_row(name, payload, cid, caches.latest_graph.get(cid), lineno)
    if row["cache"] == "fx_graph" and row["outcome"] is None and name.endswith("_hash"):
        # 2.4 logs the key before the lookup and nothing of a hit: the compile's next lookup or its
        # end settles this one (`settle_lookups`)
        settle_lookups(caches, cid, ended=True)
        row["graph_id"] = None
        caches.unsettled[cid] = (row, caches.latest_graph.get(cid))
        return
    caches.log.parsed.add("cache_events", row)


def settle_lookups(caches: Caches, compile_id: str | None, ended: bool) -> None:
    """The outcome of the lookups of `compile_id` (any attempt of it) logged without one: a miss
    where output code of the compile came after it (Inductor compiled), a hit where the compile went
    on (`ended`: its next lookup or its end) without code (Inductor loaded it), else unknown."""
    frame = without_attempt(compile_id)
    for cid in [c for c in caches.unsettled if c == compile_id or without_attempt(c) == frame]:
        row, graph_then = caches.unsettled.pop(cid)
        graph_now = caches.latest_graph.get(cid)
        if graph_now != graph_then:
            row["outcome"], row["graph_id"] = "miss", graph_now
        elif ended:
            row["outcome"] = "hit"
        caches.log.parsed.add("cache_events", row)


def settle_all_lookups(caches: Caches) -> None:
    """At the log's end: the lookups no later record settled are a miss where code followed, else unknown."""
    for cid in list(caches.unsettled):
        settle_lookups(caches, cid, ended=False)


def read_kernel_info(caches: Caches, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    payload = caches.log.json(data, lineno, "triton_kernel_info")
    kernel_autotune_rows(caches.log.parsed, payload, cid, caches.latest_graph.get(cid), lineno)


def count_cache_lookups(caches: Caches, compile_id: str | None, compilation: Mapping[str, Any]) -> None:
    """Add a compilations row's lookup counts to its compile id's (see `settle_locations`)."""
    counts = caches.counts.setdefault(compile_id, {})
    for key, column in _LOOKUP_COUNTS.items():
        counts[key] = counts.get(key, 0) + (compilation[column] or 0)


def settle_locations(cache_events: Iterable[dict[str, Any]], cache_counts: dict[str | None, LookupCounts]) -> None:
    """compilation_metrics (2.11+) say which cache served a lookup: where only one did, that is it."""
    for e in cache_events:
        counts = cache_counts.get(without_attempt(e["compile_id"])) or cache_counts.get(e["compile_id"])
        if counts and e["cache"] in ("fx_graph", "aot_autograd") and e["outcome"] in ("hit", "miss"):
            served = [w for w in ("local", "remote") if counts.get((e["cache"], e["outcome"], w))]
            e["location"] = served[0] if len(served) == 1 else None


def graph_cache_states(cache_events: Iterable[dict[str, Any]]) -> dict[str, str]:
    """graph id -> the outcome of its last FX graph cache lookup."""
    return {e["graph_id"]: e["outcome"] for e in cache_events
            if e["cache"] in _GRAPH_CACHES and e["graph_id"] is not None and e["outcome"]}


def cache_row(name: str, payload: Json, compile_id: str | None, graph_id: str | None, line: int) -> CacheEventRow:
    """The cache_events row of a cache artifact (see CACHE_ARTIFACT)."""
    m = CACHE_ARTIFACT.match(name)
    assert m is not None, "the reader is called only for the names CACHE_ARTIFACT matches"
    info = payload if isinstance(payload, dict) else {}
    state = info.get("cache_state")
    outcome = state if isinstance(state, str) and state else (m.group(2) if m.group(2) in _OUTCOME_WORDS else None)
    if outcome is None and m.group(2) not in ("hash",):
        outcome = m.group(2)  # dynamo_cache_entries, ...: what the record says happened
    saved = info.get("time_saved_ns")
    saved_us = saved / 1e3 if isinstance(saved, (int, float)) and not isinstance(saved, bool) else None
    if saved_us is None and isinstance(info.get("time_saved_ms"), (int, float)):
        saved_us = info["time_saved_ms"] * 1e3
    reason = info.get("cache_bypass_reason")
    return {
        "compile_id": compile_id, "graph_id": graph_id if m.group(1) in ("fx_graph", "fx_graph_bundled") else None,
        "cache": _CACHE_NAMES[m.group(1)], "outcome": outcome, "reason": as_str(reason),
        "cache_key": as_str(info.get("key")), "location": None, "kernel_name": None, "time_saved_us": saved_us,
        "source": "artifact", "line": line,
    }


def kernel_autotune_rows(parsed: Parsed, payload: Json, compile_id: str | None, graph_id: str | None, line: int) -> None:
    """`triton_kernel_info` (2.8+): each kernel's autotune cache state (hit, miss, only 1 config,
    force_disabled): one cache_events row each; and its Triton facts: number of configs, compile
    time, and the config that runs where the record knows it (`best_config` on a cache hit,
    `only_config`: lists of [name, value] pairs)."""
    if not isinstance(payload, dict):
        return
    for kernel, info in payload.items():
        if not isinstance(info, dict):
            continue
        state = info.get("autotune_cache_state")
        if isinstance(state, str):
            parsed.add("cache_events", {
                "compile_id": compile_id, "graph_id": graph_id, "cache": "autotune", "outcome": state,
                "reason": None, "cache_key": None, "location": None, "kernel_name": str(kernel),
                "time_saved_us": None, "source": "artifact", "line": line,
            })
        config = _config_pairs(info.get("best_config") or info.get("only_config"))
        parsed.add("triton_kernels", {
            "compile_id": compile_id, "kernel_name": str(kernel), "source": SOURCE, "cache_key": None,
            "num_warps": as_int(config.get("num_warps")) if config else None,
            "num_stages": as_int(config.get("num_stages")) if config else None,
            "num_ctas": as_int(config.get("num_ctas")) if config else None,
            "maxnreg": as_int(config.get("maxnreg")) if config else None,
            "shared_bytes": None, "target": None, "triton_version": None,
            "config": ", ".join(f"{k}={v}" for k, v in config.items()) if config else None,
            "chosen": True if config else None, "autotune_state": state if isinstance(state, str) else None,
            "num_configs": as_int(info.get("num_configs")) if "num_configs" in info
            else (1 if state == "only 1 config" else None),
            "compile_time_us": as_float(info.get("compile_time_us")),
            "n_regs": None, "n_spills": None, "metadata": info,
        })


def _config_pairs(value: Json) -> dict[str, Json] | None:
    """A Triton config as Inductor hashes it for its caches: [[name, value], ...]."""
    if not isinstance(value, list):
        return None
    pairs: dict[str, Json] = {}
    for item in value:
        if isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str):
            pairs[item[0]] = item[1]
    return pairs or None
