"""fx_graph_readable.py / fx_graph_transformed.py, and the trace's `inductor_post_grad_graph`.

One `ops` row per FX node, in graph order:

* `placeholder`: each `forward()` argument (its annotation gives dtype and shape);
* `call_function`: `x: "f32[4, 16]" = torch.ops.aten.add.Tensor(...)` -> target `aten.add.Tensor`;
  symbolic arithmetic such as `mul_6: "Sym(s27*s77)" = primals_3 * primals_4` -> target `operator.mul`;
* `getitem`: `getitem_1: "f32[4, 16, 1]" = var_mean[1]` -> target `getitem`;
* `get_attr`: `_tensor_constant0 = self._tensor_constant0` -> target `_tensor_constant0`;
* `output`: the `return (...)` line, named `output`, target NULL.

Annotations are `<dtype>[<dims>]` (trace payloads append `[<strides>]<device>`, which is dropped)
or `Sym(<expr>)` (dtype NULL, shape `Sym(<expr>)`). Multi-output calls (var_mean, SDPA) carry no
annotation. `# File: <path>:<line> in <fn>, code: <src>` comments (also prefixed
`Backward of forward node:`) set the source of the nodes that follow, until the next comment;
`# No stacktrace found for following nodes` clears it.

Graphs of exported programs (AOTInductor's post-grad graph) take no arguments: their inputs are
declared on one line (`arg2_1: "f32[8, 10][10, 1]cpu"; arg3_1: "..."; `), placeholders too, and
unpacked by `arg2_1, arg3_1, = fx_pytree.tree_flatten_spec(...)`, which adds no node.
"""

from __future__ import annotations

import functools
import re

from inductor_warehouse.ingest.rows import OpRow, Parsed

_NODE = re.compile(r'^\s+(?P<name>\w+)(?:: "(?P<type>[^"]*)")? = ')
# most nodes call a function: node and target in one match (what _classify makes of a call)
_CALL_NODE = re.compile(_NODE.pattern + r"(?:torch\.ops\.)?(?P<callee>[\w.]+)\(")
_FREED = re.compile(r"(?:\w+ = )+None$")
_CALL = re.compile(r"^(?P<callee>[\w.]+)\(")
_GETITEM = re.compile(r"^\w+\[-?\d+\]$")
_GET_ATTR = re.compile(r"^self\.(?P<attr>[\w.]+)$")
_BINOP = re.compile(r"^\S+ (?P<op>//|\*\*|[*+\-/%]|<=|>=|==|!=|<|>) \S+$")
_BINOP_NAMES = {
    "*": "mul", "+": "add", "-": "sub", "/": "truediv", "//": "floordiv", "%": "mod", "**": "pow",
    "<": "lt", ">": "gt", "<=": "le", ">=": "ge", "==": "eq", "!=": "ne",
}
_TENSOR_TYPE = re.compile(r"^(?P<dtype>\w+)(?P<shape>\[[^\]]*\])")
_SOURCE = re.compile(r"^\s*#(?: Backward of forward node:)? File: (?P<file>.*):(?P<line>\d+) in [^,]*, code: (?P<code>.*)$")
_NO_SOURCE = "# No stacktrace found"
_PARAM = re.compile(r'(?P<name>\w+)(?:\s*:\s*"(?P<type>[^"]*)")?')
_DECLARED_INPUTS = re.compile(r'^(?:\w+: "[^"]*";\s*)+$')
_UNPACKED_INPUTS = re.compile(r"^(?:\w+, )+= fx_pytree\.tree_flatten_spec\(")
# a node's place in the user's code: (file, line, code)
Source = tuple[str | None, int | None, str | None]


def parse_fx_graph(text: str) -> Parsed:  # noqa: C901 - one loop over a graph's line kinds
    parsed = Parsed()
    ops = parsed.rows["ops"]  # rows of parsed.add("ops", ...): their count numbers the next
    source: Source = (None, None, None)
    signature: list[str] | None = None
    saw_forward = saw_return = False

    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if signature is not None:
            signature.append(stripped.split("  #", 1)[0])
            if stripped.endswith("):"):
                _placeholders(" ".join(signature), parsed)
                signature = None
            continue
        if not stripped:
            continue
        if stripped.startswith("def forward("):
            saw_forward = True
            if stripped.endswith("):"):
                _placeholders(stripped, parsed)
            else:  # AOT-style graphs put each argument on its own line
                signature = [stripped]
            continue
        if stripped.startswith("#"):
            m = _SOURCE.match(line)
            if m:
                source = (m["file"], int(m["line"]), m["code"])
            elif stripped.startswith(_NO_SOURCE):
                source = (None, None, None)
            continue
        if stripped.startswith("return "):
            saw_return = True
            parsed.add("ops", _row(len(ops), "output", "output", None, None, (None, None, None)))
            continue
        m = _CALL_NODE.match(line)
        if m is not None:
            parsed.add("ops", _row(len(ops), m["name"], "call_function", m["callee"], m["type"], source))
            continue
        m = _NODE.match(line)
        if m is None:
            # neither can be a node line: tried only when a line is not one
            if stripped.startswith("class ") or _UNPACKED_INPUTS.match(stripped):
                continue
            if _DECLARED_INPUTS.match(stripped):
                _placeholders(f"({stripped.rstrip().rstrip(';').replace(';', ',')})", parsed)
                continue
            parsed.problem(f"unrecognised graph line: {stripped[:120]}", lineno, "warning")
            continue
        kind, target = _classify(_strip_freed(line[m.end() :]))
        if kind is None:
            parsed.counters["fx_graph: node with unknown right-hand side"] += 1
            kind = "call_function"
        parsed.add("ops", _row(len(ops), m["name"], kind, target, m["type"], source))

    if signature is not None:
        parsed.problem("forward() signature never closed (file cut short?)", None)
    elif not saw_forward:
        parsed.problem("no forward() found: not an FX graph")
    elif not saw_return:
        parsed.problem("graph has no return line (file cut short?)", None)
    return parsed


def _placeholders(signature: str, parsed: Parsed) -> None:
    inner = signature[signature.index("(") + 1 : signature.rindex(")")]
    ops = parsed.rows["ops"]
    for m in _PARAM.finditer(inner):
        if m["name"] != "self":
            parsed.add("ops", _row(len(ops), m["name"], "placeholder", None, m["type"], (None, None, None)))


def _strip_freed(rhs: str) -> str:
    """Drop the trailing `;  a = b = None` clause that lists values freed after the node."""
    if not rhs.endswith(" = None"):
        return rhs
    cut = rhs.rfind(";  ")
    if cut != -1 and _FREED.match(rhs, cut + 3):
        return rhs[:cut]
    return rhs


def _classify(rhs: str) -> tuple[str | None, str | None]:
    m = _CALL.match(rhs)
    if m:
        callee = m["callee"]
        return "call_function", callee[len("torch.ops.") :] if callee.startswith("torch.ops.") else callee
    if _GETITEM.match(rhs):
        return "getitem", "getitem"
    m = _GET_ATTR.match(rhs)
    if m:
        return "get_attr", m["attr"]
    m = _BINOP.match(rhs)
    if m:
        return "call_function", "operator." + _BINOP_NAMES[m["op"]]
    return None, rhs


def _row(idx: int, name: str, kind: str, target: str | None, type_text: str | None, source: Source) -> OpRow:
    dtype, shape = _dtype_and_shape(type_text) if type_text else (None, None)
    return {
        "idx": idx,
        "name": name,
        "op_kind": kind,
        "target": target,
        "dtype": dtype,
        "shape": shape,
        "source_file": source[0],
        "source_line": source[1],
        "source_code": source[2],
    }


@functools.lru_cache(maxsize=4096)
def _dtype_and_shape(type_text: str) -> tuple[str | None, str | None]:
    """An annotation's dtype and shape, kept for the texts seen last: a graph's nodes share a few."""
    if type_text.startswith("Sym("):
        return None, type_text
    m = _TENSOR_TYPE.match(type_text)
    return (m["dtype"], m["shape"]) if m else (None, type_text)
