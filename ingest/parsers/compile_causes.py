"""What a compile event is, where it happened, and its cause as one name across releases.

- `break_kind`: a graph-break record as Dynamo's own counters file it. `counters["graph_break"]` (the
  benchmark harness's `graph_breaks`, HUD's) counts a break that `break_graph_if_unsupported` caught
  and resumed after; a data-dependent branch (`generic_jump`) and a break Dynamo could not resume
  from (`step_graph_break`: the graph so far compiled, the rest of the frame run eagerly) also split
  the frame, but Dynamo files them under `counters["unimplemented"]`; a frame that could not handle
  its break is skipped and fell back to eager: Dynamo counts a failed frame, not a graph break
  (torch/_dynamo/symbolic_convert.py and convert_frame.py, 2.6 to 2.14; the failure is the
  compile's `compilation_metrics` fail_type).
- `origin`: where a frame's file lives: the model's own code, an installed package, torch, or the
  standard library. A breakdown; every event counts whatever its origin.
- `cause`: graph breaks, failures and restarts by Dynamo's graph-break registry id (in the message's link since
  2.8, else its title, else a pre-registry message mapped by ../causes/pre_registry.json);
  recompiles by the kind of guard that failed.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

CAUSES = Path(__file__).resolve().parent.parent / "causes"

GRAPH_BREAK = "graph_break"
UNCOUNTED = "uncounted_break"
SKIPPED = None  # a frame that fell back to eager: its failure is stored, not a graph break

_LABEL = re.compile(r"^\s*(?:Graph Break Reason|Reason): ")
# breaks Dynamo resumes from but does not count in counters["graph_break"]
_UNCOUNTED = re.compile(r"(?:Data-dependent (?:jump|branching)|Encountered graph break that we cannot resume from)")
# records of a frame that could not handle its break: skipped, run eagerly
_SKIPPED = re.compile(r"(?:Failed to handle graph break gracefully|Graph break: skip:|"
                      r"torch\.compile cannot properly resume from this graph break, which results in a skip)")
_PREAMBLE = re.compile(r"^(?:Encountered (?:graph break when attempting|intentional debugging graph break)|"
                       r"Failed to handle graph break gracefully|Encountered graph break that we cannot resume)")
_LINK = re.compile(r"/gb/(gb\d+)\.html")


def break_kind(reason: str) -> str | None:
    """GRAPH_BREAK (counted by Dynamo), UNCOUNTED (split the frame, filed as unimplemented) or SKIPPED
    (None: the frame fell back to eager) for the text of a graph-break record, past its `at F:L` line."""
    head = _LABEL.sub("", reason.lstrip(), count=1)[:400]
    if _SKIPPED.match(head) or _SKIPPED.search(reason[:400]):
        return SKIPPED
    if _UNCOUNTED.match(head):
        return UNCOUNTED
    return GRAPH_BREAK


def in_torch(path: str) -> bool:
    """A frame of torch's own code: its installed package (functorch, torchgen too) or a source
    checkout's torch/ folder, never torch.hub's cache of models ($TORCH_HOME/hub/, by default
    ~/.cache/torch/hub/), whose code is the model's."""
    p = path.replace("\\", "/")
    if "/site-packages/" in p or "/dist-packages/" in p:
        return p.split("-packages/", 1)[1].startswith(("torch/", "functorch/", "torchgen/"))
    return "/torch/" in p and "/torch/hub/" not in p


def origin(path: str | None) -> str | None:
    """'model', 'package', 'torch' or 'stdlib' for a frame's file; None when unknown. torch.nn's
    layers (nn.Sequential, nn.Linear: torch/nn/modules/ but module.py's call machinery) are the
    model's own layers; a model in an installed package (transformers, timm) is a package's code."""
    if not path:
        return None
    p = path.replace("\\", "/")
    if p.startswith("<frozen "):
        return "stdlib"
    if p.startswith("<eval_with_key>"):
        return "torch"  # an FX GraphModule's generated forward
    if in_torch(p):
        tail = p.split("-packages/", 1)[-1]
        rest = tail.split("torch/", 1)[1] if "torch/" in tail else ""
        if rest.startswith("nn/modules/") and not rest.startswith("nn/modules/module.py"):
            return "model"
        return "torch"
    if "/site-packages/" in p or "/dist-packages/" in p:
        return "package"
    if re.search(r"/lib/python\d[\d.]*t?/", p):
        return "stdlib"
    return "model"


@functools.cache
def _registry() -> tuple[dict[str, str], dict[str, str], list[tuple[re.Pattern[str], str]]]:
    ids = json.loads((CAUSES / "graph_break_registry.json").read_text())["ids"]
    titles = {gid: names[0] for gid, names in ids.items()}
    by_title = {name: gid for gid, names in sorted(ids.items()) for name in names}
    rules = [(re.compile(r["pattern"]), r["id"]) for r in json.loads((CAUSES / "pre_registry.json").read_text())["rules"]]
    return titles, by_title, rules


def headline(reason: str) -> str:
    """The first line of a reason that says what happened: past the `Reason: ` label, Dynamo's
    `Encountered graph break when attempting to trace ...` preamble and an `Unsupported: ` prefix."""
    text = _LABEL.sub("", reason.lstrip(), count=1)
    lines = [line.strip() for line in text.split("\n")[:8]]
    lines = [line for line in lines if line]
    if len(lines) > 1 and _PREAMBLE.match(lines[0]):
        lines = lines[1:]
    head = lines[0] if lines else ""
    head = head.removeprefix("Unsupported: ").strip("'\" ")
    return head


def break_cause(reason: str | None) -> tuple[str | None, str | None]:
    """(registry id, its title) of a graph break's or failure's reason, or (None, None)."""
    if not reason:
        return None, None
    titles, by_title, rules = _registry()
    m = _LINK.search(reason)
    if m and m.group(1) in titles:
        return m.group(1), titles[m.group(1)]
    head = headline(reason)
    gid = by_title.get(head)
    if gid is None:
        gid = next((g for pattern, g in rules if pattern.match(head)), None)
    return (gid, titles.get(gid)) if gid in titles else (None, None)


# the guard that failed, by what its text says (Dynamo's GuardBuilder kinds and the shape env's guards)
_GUARDS = [
    (re.compile(r"\btensor '.*?' ([a-z_][\w ]*?) mismatch"), None),
    (re.compile(r"___check_obj_id\(|___check_obj_id\b|\bid\(.*\) =="), "object identity (ID_MATCH)"),
    (re.compile(r"___check_type_id\(|___check_isinstance|isinstance\("), "type (TYPE_MATCH)"),
    (re.compile(r"\blen\(.*\) ?(?:==|!=)|___check_len|___dict_len|dict_len"), "length (LENGTH_CHECK)"),
    (re.compile(r"hasattr\("), "attribute presence (HASATTR)"),
    (re.compile(r"GLOBAL_STATE|___check_global_state|grad_mode|autocast|torch_function_mode_stack|"
                r"___check_current_backend|deterministic_algorithms"), "global state (GLOBAL_STATE)"),
    (re.compile(r"\.size\(\)\[|\.stride\(\)\[|\.storage_offset\(\)|\b(?:Ne|Eq|Ge|Le|Gt|Lt|Mod)\(|\bs\d+\b"),
     "dynamic shape (SHAPE_ENV)"),
    (re.compile(r"Duplicate tensors|___check_tensors|dup_inputs"), "tensor aliasing (DUPLICATE_INPUT)"),
    (re.compile(r"___dict_contains|\bnot ___dict_contains| in \w"), "dict keys (DICT_CONTAINS)"),
    (re.compile(r"cache_size_limit|recompile_limit"), "recompile limit"),
    (re.compile(r"==|!=|\bis None\b|\bis not None\b|^\s*not \w|\bis (?:True|False)\b"), "value (EQUALS_MATCH)"),
]
_ENTRY = re.compile(r"^!?[\d-]+(?:/[\d-]+)+(?:_\d+)?: ")


def guard_kind(reason: str | None) -> str | None:
    """The kind of the first guard that failed in a recompile's reason: `tensor size mismatch`,
    `object identity (ID_MATCH)`, `dynamic shape (SHAPE_ENV)`, ...; 'other guard' when unrecognised."""
    if not reason:
        return None
    first = _ENTRY.sub("", reason.lstrip().lstrip('["').split("\n", 1)[0])
    first = re.split(r"\s{2,}#", first, maxsplit=1)[0]  # the source line Dynamo appends after `  #`
    for pattern, kind in _GUARDS:
        m = pattern.search(first)
        if m:
            return kind or f"tensor {m.group(1)} mismatch (TENSOR_MATCH)"
    return "other guard"


def cause_of(kind: str, reason: str | None) -> tuple[str | None, str | None]:
    """(cause_id, cause_title) of an event: a registry id for breaks, failures and restarts, a guard
    kind for recompiles."""
    if kind == "recompile":
        g = guard_kind(reason)
        return g, g
    # a restart's reason is the message of the break that restarted the frame's analysis
    # (convert_frame's `restart_reasons.add(e.restart_reason ...)`); one with no message never maps
    if kind in (GRAPH_BREAK, UNCOUNTED, "failure", "restart"):
        return break_cause(reason)
    return None, None
