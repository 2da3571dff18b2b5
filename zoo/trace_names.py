"""Every TORCH_TRACE record kind and artifact name a torch source tree can write, read off its code.

    python -m zoo.trace_names .venv-torch-2.14.1/lib/python3.11/site-packages/torch

A syntax-tree scan of the `.py` files under the folder: calls of `trace_structured(KIND, ...)` and
`dtrace_structured(KIND, ...)` (with `metadata_fn=lambda: {"name": NAME, ...}`, the name of an
`artifact`, `graph_dump`, `link` or `dump_file` record), `trace_structured_artifact(NAME, ...)`,
and, one wrapper deep at a time until nothing new is found, calls of the functions that pass one of
their parameters on as such a kind or name (`_log_structured(..., "runtime_wrapper_orchestration")`).
A name computed at run time becomes a pattern: an f-string's fields and the unknown operands of a
`+` are `*` (`fx_graph_cache_*`, `*_MODIFIED_BYTECODE`), a conditional gives both branches, a local
variable the values assigned to it in the function. What cannot be read that way is printed as
`EXPR:<its source text>`. Prints `record<TAB>name` lines (name empty for a kind without one), or
JSON with --json. ingest/parsers/trace_records.py must know every name this prints for the releases it covers
(tests/test_trace_records.py checks it against the local torch wheels).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

WRITERS = ("trace_structured", "dtrace_structured")
ARTIFACT_WRITERS = ("trace_structured_artifact",)
NAMED_KINDS = ("artifact", "graph_dump", "link", "dump_file")


def scan(root: Path) -> set[tuple[str, str]]:
    """{(record kind, name or "")} written by the code under `root`."""
    texts = {p: p.read_text(encoding="utf-8", errors="replace") for p in sorted(root.rglob("*.py"))}
    # callee name -> ("record" | "artifact", the position of the kind or name among its arguments)
    writers: dict[str, tuple[str, int]] = {w: ("record", 0) for w in WRITERS}
    writers.update({w: ("artifact", 0) for w in ARTIFACT_WRITERS})
    trees: dict[Path, ast.AST] = {}
    while True:
        for path, text in texts.items():
            if path not in trees and any(w in text for w in writers):
                try:
                    trees[path] = ast.parse(text)
                except SyntaxError:
                    trees[path] = ast.Module(body=[], type_ignores=[])
        found: set[tuple[str, str]] = set()
        wrappers: dict[str, tuple[str, int]] = {}
        consts = {id(t): _module_strings(t) for t in trees.values()}
        for tree in trees.values():
            for fn, kind, name_expr in _writes(tree, writers):
                if fn is not None and fn.name in writers:
                    continue  # a writer's own body: its callers say the names
                param = _parameter_index(fn, name_expr) if fn is not None else None
                if param is not None and not _assigned(fn, name_expr.id):
                    wrappers[fn.name] = ("record", param) if kind is None else ("artifact", param) \
                        if kind == "artifact" else (f"named:{kind}", param)
                    continue
                values = _values(name_expr, fn, consts[id(tree)])
                if isinstance(name_expr, ast.Attribute) and _is_self(name_expr.value):
                    # `self._artifact_name`, set from the constructor: the names its callers pass
                    values = _keyword_strings(texts, name_expr.attr.lstrip("_")) or values
                for value in values:
                    found.add((value, "") if kind is None else (kind, value))
        new = {k: v for k, v in wrappers.items() if k not in writers}
        if not new:
            return found
        writers.update(new)


def _writes(tree: ast.AST, writers: dict):
    """(enclosing function, record kind or None when the expression is the kind, name expression)."""
    stack: list = [None]

    def visit(node):
        is_fn = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        if is_fn:
            stack.append(node)
        if isinstance(node, ast.Call):
            callee = node.func.id if isinstance(node.func, ast.Name) else \
                node.func.attr if isinstance(node.func, ast.Attribute) else None
            if callee in writers:
                what, index = writers[callee]
                expr = node.args[index] if index < len(node.args) else next(
                    (kw.value for kw in node.keywords if kw.arg == "name"), None)
                if expr is not None:
                    if what == "artifact":
                        yield stack[-1], "artifact", expr
                    elif what.startswith("named:"):
                        yield stack[-1], what[6:], expr
                    elif isinstance(expr, ast.Constant) and expr.value in NAMED_KINDS:
                        name = _metadata_name(node)
                        yield stack[-1], None, expr
                        if name is not None:
                            yield stack[-1], expr.value, name
                    else:
                        yield stack[-1], None, expr
        for child in ast.iter_child_nodes(node):
            yield from visit(child)
        if is_fn:
            stack.pop()

    yield from visit(tree)


def _metadata_name(call: ast.Call) -> ast.expr | None:
    """The "name" of `metadata_fn=lambda: {"name": ..., ...}` (or of a dict given directly), the
    metadata function given by keyword or as the second argument."""
    given = [kw.value for kw in call.keywords if kw.arg == "metadata_fn"] + call.args[1:2]
    for fn in given:
        body = fn.body if isinstance(fn, ast.Lambda) else fn
        if isinstance(body, ast.Dict):
            for k, v in zip(body.keys, body.values, strict=True):
                if isinstance(k, ast.Constant) and k.value == "name":
                    return v
    return None


def _parameter_index(fn, value: ast.expr) -> int | None:
    """The position of the parameter `value` names (self excluded), when it names one."""
    if not isinstance(value, ast.Name):
        return None
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    return params.index(value.id) if value.id in params else None


def _assigned(fn, name: str) -> list[ast.expr]:
    """Values assigned to a local variable anywhere in the function (walrus included)."""
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                out.append(node.value)
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and isinstance(node.target, ast.Name) \
                and node.target.id == name and node.value is not None:
            out.append(node.value)
    return out


def _values(expr: ast.expr, fn, consts: dict | None = None) -> set[str]:
    """The strings (or `*` patterns) an expression can be; `EXPR:<source>` when unreadable."""
    found = _strings(expr, fn, consts or {}, {})
    readable = {v for v in found if v.strip("*")}
    return readable if readable and readable == found else {"EXPR:" + ast.unparse(expr)}


def _strings(expr: ast.expr, fn, consts: dict, env: dict) -> set[str]:
    """The strings an expression can be, `*` standing for any text; empty when unknown."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return {expr.value}
    if isinstance(expr, ast.JoinedStr):
        out = {""}
        for v in expr.values:
            part = {v.value} if isinstance(v, ast.Constant) else {"*"}
            out = {a + b for a in out for b in part}
        return {_squash(v) for v in out}
    if isinstance(expr, ast.IfExp):
        return _strings(expr.body, fn, consts, env) | _strings(expr.orelse, fn, consts, env)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        left = _strings(expr.left, fn, consts, env) or {"*"}
        right = _strings(expr.right, fn, consts, env) or {"*"}
        return {_squash(a + b) for a in left for b in right}
    if isinstance(expr, ast.Name):
        if expr.id in env:
            return env[expr.id]
        if fn is not None and (assigned := _assigned(fn, expr.id)):
            # `name = "x"` then `name = "bwd_" + name`: each later assignment builds on the earlier
            values: set[str] = set()
            for value in assigned:
                refers = any(isinstance(n, ast.Name) and n.id == expr.id for n in ast.walk(value))
                if refers and not values:
                    continue
                values |= _strings(value, fn, consts, {**env, expr.id: set(values)})
            return values
        if expr.id in consts:
            return {consts[expr.id]}
    return set()


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _keyword_strings(texts: dict, keyword: str) -> set[str]:
    """String constants passed as `keyword=` anywhere in the tree."""
    out: set[str] = set()
    for text in texts.values():
        if f"{keyword}=" in text:
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            out |= {kw.value.value for node in ast.walk(tree) if isinstance(node, ast.Call) for kw in node.keywords
                    if kw.arg == keyword and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)}
    return out


def _module_strings(tree: ast.AST) -> dict[str, str]:
    """Module-level `NAME = "text"` constants."""
    return {t.id: node.value.value for node in getattr(tree, "body", ()) if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
            for t in node.targets if isinstance(t, ast.Name)}


def _squash(pattern: str) -> str:
    while "**" in pattern:
        pattern = pattern.replace("**", "*")
    return pattern


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("torch_dir", type=Path, help="the torch package folder (site-packages/torch)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    names = sorted(scan(args.torch_dir))
    if args.json:
        print(json.dumps([{"record": k, "name": n} for k, n in names], indent=1))
    else:
        for k, n in names:
            print(f"{k}\t{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
