"""torch-spyre's provenance sidecar, `spyre_provenance.json` (schema version 1), one per process,
merged across its compiles. What each field means: ../shared/corpus/spyre/provenance/README.md and
torch-spyre's `spyre_provenance_v1.schema.json`.

Rows:
- spyre_handles: one per debug handle: its source file, line and column (NULL when the handle has
  no source, as a fused handle does), ATen op, IR chain, the handles it was fused from, and its
  transform history (typed rewrites) as JSON.
- spyre_kernel_identities: one per kernel identity (a bundle's content key, stable across compiles
  and cache replays): the profiler event name it runs under (`eventNameBase`; the runtime appends
  `#<step>`), its ATen ops, its direct handles and spec bindings.
- spyre_kernel_occurrences: one per kernel of a compile: identity, compile, compiler kernel name
  (the `sdsc_*` kernel) and upstream registration aliases (`<kernel>:<ordinal>`).
- spyre_compiles: one per compile's upstream projection: producers, provenance settings, and
  `upstream_join`: 'ok', 'partial' (some of its kernels' upstream records are missing), or the gap
  Inductor's provenance left ('unavailable-provenance-level-0', 'unavailable-cache-replay'): a fact
  about the compile, counted, never an error.
- lineage: for each ok or partial projection's kernel stack traces, (kernel, debug handle) -> user
  line, on the graph named by the compiler kernel (the assembler moves it to that kernel's folder).
What torch-spyre's own reader would refuse is a warning each (spyre_provenance_checks); the records stay.

facts["identities"]: {compiler kernel name: eventNameBase}, so the assembler can give the kernels of
those folders their cross-run identity.
"""

from __future__ import annotations

from inductor_warehouse.ingest.parsers.spyre_provenance_checks import findings
from inductor_warehouse.ingest.parsers.user_code import stack_trace_rows
from inductor_warehouse.ingest.rows import Json, Parsed

SCHEMA_VERSION = 1


def parse_spyre_provenance(data: bytes) -> Parsed:  # noqa: C901 - one loop over its record kinds
    parsed = Parsed()
    doc = parsed.json_object(data, "spyre_provenance.json")
    if doc is None:
        return parsed
    version = doc.get("schemaVersion")
    if version != SCHEMA_VERSION:
        parsed.problem(f"spyre_provenance.json schemaVersion {version!r} is not {SCHEMA_VERSION}: read as version 1",
                       severity="warning")
    for finding in findings(doc):
        parsed.problem(f"spyre_provenance.json: {finding}", severity="warning")
    parsed.facts.update(device="spyre", backend="spyre")
    for key, h in _items(doc, "handles", parsed):
        source = _object(h.get("source"))
        parsed.add("spyre_handles", {
            "handle_id": str(h.get("id", key)), "source_file": _str(source.get("file")),
            "source_line": _int(source.get("start_line")), "source_col": _int(source.get("start_col")),
            "aten_op": _str(h.get("aten_op")), "ir_chain": _strs(h.get("ir_chain")),
            "fused_from": _strs(h.get("fused_from")), "transform_history": h.get("transform_history") or [],
        })
    identities: dict[str, str | None] = {}
    for key, k in _items(doc, "kernelIdentities", parsed):
        parsed.add("spyre_kernel_identities", {
            "identity_key": key, "event_name_base": _str(k.get("eventNameBase")), "aten_ops": _strs(k.get("atenOps")),
            "handle_ids": _strs(k.get("directHandleIds")), "spec_bindings": k.get("specHandleBindings") or [],
        })
        identities[key] = _str(k.get("eventNameBase"))
    names: dict[str, str] = {}
    for key, o in _items(doc, "kernelOccurrences", parsed):
        identity, kernel = _str(o.get("identityKey")), _str(o.get("compilerKernelName"))
        registrations = _list(o.get("registrations"))
        parsed.add("spyre_kernel_occurrences", {
            "occurrence_key": key, "identity_key": identity, "compile_key": _str(o.get("compileId")),
            "compiler_kernel_name": kernel,
            "aliases": [str(r.get("alias")) for r in registrations if isinstance(r, dict) and r.get("alias")],
        })
        if kernel and identity is not None and (base := identities.get(identity)):
            # kernel names are per-compile counters: a name two identities share names neither
            names[kernel] = base if names.get(kernel, base) == base else ""
    for key, p in _items(doc, "upstreamProjections", parsed):
        producer = _object(p.get("producer"))
        settings = _object(p.get("settings"))
        join = _str(p.get("upstreamJoin"))
        kernels = _list(p.get("kernels"))
        parsed.add("spyre_compiles", {
            "compile_key": key, "upstream_join": join, "projection_failed": _bool(p.get("upstreamProjectionFailed")),
            "provenance_level": _int(settings.get("provenanceTrackingLevel")),
            "structured_tracing": _bool(settings.get("structuredTracing")),
            "torch_spyre_version": _str(producer.get("torchSpyreVersion")),
            "torch_version": _str(producer.get("torchVersion")), "kernels": len(kernels),
            "uncollected_kernels": _strs(p.get("uncollectedKernels")),
        })
        if join != "ok":
            parsed.counters[f"spyre_upstream_join:{join}"] += 1
        if join not in ("ok", "partial"):
            continue  # a partial join still holds the stack traces it captured
        stacks = _object(p.get("kernelStackTraces"))
        by_kernel: dict[str, dict[str, Json]] = {}
        for alias, entry in stacks.items():
            traces = entry.get("stackTraces") if isinstance(entry, dict) else None
            by_kernel.setdefault(alias.rpartition(":")[0] or alias, {})[alias] = traces or []
        for kernel, aliases in by_kernel.items():
            stack_trace_rows(parsed, kernel, aliases)
    for row in parsed.rows.get("lineage", ()):
        row["source"] = "spyre_provenance"
    parsed.facts["identities"] = {k: v for k, v in names.items() if v}
    return parsed


def _items(doc: dict[str, Json], key: str, parsed: Parsed) -> list[tuple[str, dict[str, Json]]]:
    value = doc.get(key)
    if value is None:
        return []
    if not isinstance(value, dict):
        parsed.problem(f"spyre_provenance.json {key} is not an object")
        return []
    return [(str(k), v) for k, v in value.items() if isinstance(v, dict)]


def _object(v: Json) -> dict[str, Json]:
    """A JSON object, or an empty one in place of any other value."""
    return v if isinstance(v, dict) else {}


def _list(v: Json) -> list[Json]:
    return v if isinstance(v, list) else []


def _str(v: object) -> str | None:
    return None if v is None else str(v)


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _bool(v: object) -> bool | None:
    return v if isinstance(v, bool) else None


def _strs(v: object) -> list[str]:
    return [str(x) for x in v] if isinstance(v, list) else []
