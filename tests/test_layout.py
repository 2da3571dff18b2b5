"""The code's layout is its architecture: layers import only the layers below them, and no module
imports itself back through others. Read from the source with `ast`, every import counted (also
those inside functions, which hide cycles from Python but not from a reader)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from tests.conftest import ROOT

# lowest first; a package may import its own modules and those of lower layers
LAYERS = ("schema", "ingest", "analysis", "dashboards", "cli")


def _modules() -> dict[str, Path]:
    out = {}
    for package in LAYERS:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(path: Path, known: set[str]) -> set[str]:
    """First-party modules `path` imports (`from a.b import c` is a.b.c when that is a module)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                     for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {m: _imports(p, set(modules)) - {m} for m, p in modules.items()}


def _layer(module: str) -> int:
    return LAYERS.index(module.split(".")[0])


def test_layers_import_only_downwards():
    upward = sorted(f"{m} imports {dep}" for m, deps in _graph().items() for dep in deps if _layer(dep) > _layer(m))
    assert upward == []


def test_no_import_cycles():
    graph = _graph()
    cycles, state = [], {}

    def visit(m: str, stack: list[str]) -> None:
        state[m] = "open"
        for dep in sorted(graph.get(m, ())):
            if state.get(dep) == "open":
                cycles.append(" -> ".join(stack[stack.index(dep):] + [dep]))
            elif dep not in state:
                visit(dep, stack + [dep])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_the_walk_sees_the_imports_it_judges():
    # a check that finds nothing must be shown able to find something
    graph = _graph()
    assert "schema.warehouse" in graph["ingest.load"]
    assert "analysis.compare" in graph["cli.commands.compare"]
    assert "ingest.parsers.torch_trace" in graph["ingest.assemble"]
    by_layer = defaultdict(set)
    for m, deps in graph.items():
        by_layer[m.split(".")[0]] |= {d.split(".")[0] for d in deps}
    assert by_layer["cli"] >= {"schema", "ingest", "analysis", "dashboards"}
