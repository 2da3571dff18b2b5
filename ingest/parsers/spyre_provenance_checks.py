"""What torch-spyre's own reader refuses in a `spyre_provenance.json`, said as findings.

torch-spyre validates every sidecar it merges (`provenance_writer.validate_provenance_document`):
a closed set of fields, handle ids that are decimal strings equal to their key, references that
resolve, spec paths that are not empty, occurrence and compile ids derived as a sha256 of their
content, and a document status that follows from its projections. Its fixture manifest lists
damaged files each of these catches. A finding here is a damaged file, not a failed read: the
records stay, and each finding becomes a warning of the run.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator

from inductor_warehouse.ingest.rows import Json

TOP_LEVEL = frozenset(("schemaVersion", "eventKey", "mergeGeneration", "status", "diagnostics", "handles",
                       "kernelIdentities", "kernelOccurrences", "upstreamProjections"))
# upstreamJoin values the writer produces; `partial` still carries the stack traces it captured
JOINS = frozenset(("ok", "partial", "unavailable-cache-replay", "unavailable-provenance-level-0"))
_COMPILE_DOMAIN = "torch-spyre-compile-v1"
_OCCURRENCE_DOMAIN = "torch-spyre-occurrence-v1"
_DECIMAL = re.compile(r"^(0|[1-9][0-9]*)$")


def findings(doc: dict[str, Json]) -> Iterator[str]:
    """Each rule of torch-spyre's reader the document breaks, once per place."""
    unknown = sorted(set(doc) - TOP_LEVEL)
    if unknown:
        yield f"unknown top-level field(s) {', '.join(unknown)}"
    handles, identities = _map(doc.get("handles")), _map(doc.get("kernelIdentities"))
    occurrences, projections = _map(doc.get("kernelOccurrences")), _map(doc.get("upstreamProjections"))
    yield from _handles(handles)
    yield from _identities(identities, handles)
    yield from _occurrences(occurrences, identities, projections)
    yield from _projections(projections, occurrences)
    diagnostics = doc.get("diagnostics")
    complete = not diagnostics and bool(projections) and all(
        _map(p).get("upstreamJoin") == "ok" for p in projections.values())
    expected = "complete" if complete else "partial"
    if doc.get("status") != expected:
        yield f"status {doc.get('status')!r} disagrees with its projections and diagnostics ({expected!r})"


def _handles(handles: dict[str, Json]) -> Iterator[str]:
    for key, value in handles.items():
        handle = _map(value)
        if not _DECIMAL.match(key) or handle.get("id") != key:
            yield f"debug handle {key}: its id {handle.get('id')!r} is not its key as a decimal string"
        dangling = [h for h in _list(handle.get("fused_from")) if _absent(h, handles)]
        if dangling:
            yield f"debug handle {key} is fused from handle(s) {dangling} the file does not hold"


def _identities(identities: dict[str, Json], handles: dict[str, Json]) -> Iterator[str]:
    for key, value in identities.items():
        identity = _map(value)
        direct = _list(identity.get("directHandleIds"))
        dangling = [h for h in direct if _absent(h, handles)]
        if dangling:
            yield f"kernel identity {key} names handle(s) {dangling} the file does not hold"
        bound = []
        for binding in map(_map, _list(identity.get("specHandleBindings"))):
            path = binding.get("specPath")
            if not isinstance(path, list) or not path or not all(
                    isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in path):
                yield f"kernel identity {key}: spec binding path {path!r} is not a non-empty list of indices"
            bound.append(_name(binding.get("handleId")))
        if [_name(h) for h in direct] != list(dict.fromkeys(bound)):
            yield f"kernel identity {key}: direct handles disagree with its spec bindings"


def _occurrences(occurrences: dict[str, Json], identities: dict[str, Json],
                 projections: dict[str, Json]) -> Iterator[str]:
    for key, value in occurrences.items():
        o = _map(value)
        compile_id, kernel, identity = o.get("compileId"), o.get("compilerKernelName"), o.get("identityKey")
        if _absent(compile_id, projections):
            yield f"kernel occurrence {key[:16]} names compile {str(compile_id)[:16]}, which has no projection"
        if _absent(identity, identities):
            yield f"kernel occurrence {key[:16]} names identity {identity!r}, which the file does not hold"
        expected = _digest({"domain": _OCCURRENCE_DOMAIN, "compileId": compile_id, "compilerKernelName": kernel,
                            "identityKey": identity})
        if key != expected:
            yield f"kernel occurrence {key[:16]} is not the digest of its compile, kernel and identity"
        for r in map(_map, _list(o.get("registrations"))):
            if r.get("alias") != f"{kernel}:{r.get('ordinal')}":
                yield f"kernel occurrence {key[:16]}: alias {r.get('alias')!r} is not its kernel and ordinal"


def _projections(projections: dict[str, Json], occurrences: dict[str, Json]) -> Iterator[str]:
    for key, value in projections.items():
        p = _map(value)
        kernels = [(k.get("compilerKernelName"), k.get("identityKey")) for k in map(_map, _list(p.get("kernels")))]
        named = {(_name(a), _name(b)) for a, b in kernels}
        if key != _digest({"domain": _COMPILE_DOMAIN, "kernels": [list(k) for k in kernels]}):
            yield f"compile {key[:16]} is not the digest of its kernels"
        occurring = {(_name(o.get("compilerKernelName")), _name(o.get("identityKey")))
                     for o in map(_map, occurrences.values()) if o.get("compileId") == key}
        if occurring != named:
            yield f"compile {key[:16]}: its kernels disagree with its kernel occurrences"
        if _absent(p.get("upstreamJoin"), dict.fromkeys(JOINS)):
            yield f"compile {key[:16]}: upstreamJoin {p.get('upstreamJoin')!r} is not one torch-spyre writes"


def _digest(value: object) -> str | None:
    """torch-spyre's canonical digest: sha256 of sorted, compact, ASCII JSON (None for a value JSON
    cannot say, which no key equals)."""
    try:
        text = json.dumps(value, ensure_ascii=True, allow_nan=False, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def _absent(key: Json, mapping: dict[str, Json]) -> bool:
    return not isinstance(key, str) or key not in mapping


def _name(v: Json) -> str:
    """A reference as text, so a damaged one (a number, a list) compares without failing."""
    return v if isinstance(v, str) else json.dumps(v)


def _map(v: Json) -> dict[str, Json]:
    return v if isinstance(v, dict) else {}


def _list(v: Json) -> list[Json]:
    return v if isinstance(v, list) else []
