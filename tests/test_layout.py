"""The code's layout is its architecture: layers import only the layers below them, and no module
imports itself back through others. Read from the source with `ast`, every import counted (also
those inside functions, which hide cycles from Python but not from a reader).

The layers are the repository's top-level folders, installed as one namespace (pyproject's
package-dir): `store/writer.py` is the module `inductor_warehouse.store.writer`, and every import of
it, in the package, the tests, bench/, zoo/ and demo/, says so."""

from __future__ import annotations

import ast
import subprocess
from collections import defaultdict
from pathlib import Path

from inductor_warehouse import PACKAGES
from tests.conftest import ROOT

NAMESPACE = "inductor_warehouse"
# lowest first; a package may import its own modules and those of lower layers; the namespace's own
# modules (its __init__ and __main__) sit on top of them all
LAYERS = PACKAGES
# run by a torch interpreter that has none of our packages (zoo/README.md)
TORCH_SIDE = ("zoo/worker.py", "zoo/scenarios.py", "zoo/models.py", "zoo/variants.py", "zoo/trace_names.py")


def _modules() -> dict[str, Path]:
    out = {}
    for folder in (*LAYERS, NAMESPACE):
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            out[".".join((NAMESPACE, *parts) if folder != NAMESPACE else parts)] = path
    return out


def _imported_names(path: Path) -> list[tuple[str, int]]:
    """Every absolute import of `path` as (dotted name, line); `from a.b import c` gives a.b.c."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(f"{node.module}.{a.name}", node.lineno) for a in node.names]
    return found


def _imports(path: Path, known: set[str]) -> set[str]:
    """First-party modules `path` imports (`from a.b import c` is a.b.c when that is a module)."""
    found = set()
    for name, _ in _imported_names(path):
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name:
            found.add(name)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {m: _imports(p, set(modules)) - {m} for m, p in modules.items()}


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else len(LAYERS)


def _python_files() -> list[Path]:
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / p for p in tracked.split() if not p.startswith("tests/fixtures/")]


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


def test_every_import_names_the_namespace():
    # `import schema` from a checkout would find the folder itself: a second copy of every module
    # (two WarehouseError classes, two query caches), and a name no installed wheel has
    bare = sorted(f"{p.relative_to(ROOT)}:{line} imports {name}" for p in _python_files()
                  for name, line in _imported_names(p) if name.split(".")[0] in LAYERS)
    assert bare == [], "run /work/notes/rename_namespace.py (issue 29) or write inductor_warehouse.<package>"


def test_the_torch_side_imports_nothing_of_ours():
    ours = {*LAYERS, NAMESPACE, "bench", "tests", "demo"}
    found = sorted(f"{rel}:{line} imports {name}" for rel in TORCH_SIDE for name, line in _imported_names(ROOT / rel)
                   if name.split(".")[0] in ours)
    assert found == []


def test_the_walk_sees_the_imports_it_judges():
    # a check that finds nothing must be shown able to find something
    graph = _graph()
    ns = NAMESPACE
    assert f"{ns}.schema.queries" in graph[f"{ns}.store.api"] and f"{ns}.store.rollups" in graph[f"{ns}.store.migrate"]
    assert f"{ns}.analysis.compare" in graph[f"{ns}.cli.commands.compare"]
    assert f"{ns}.ingest.parsers.torch_trace" in graph[f"{ns}.ingest.sources"]
    assert f"{ns}.cli.main" in graph[f"{ns}.__main__"] and _layer(f"{ns}.__main__") > _layer(f"{ns}.cli.main")
    by_layer = defaultdict(set)
    for m, deps in graph.items():
        by_layer[_layer(m)] |= {_layer(d) for d in deps}
    assert by_layer[LAYERS.index("cli")] >= {LAYERS.index(p) for p in ("schema", "store", "ingest", "analysis", "dashboards")}


def test_the_name_check_finds_a_bare_import(tmp_path):
    # (spelled in pieces, so that the rename script leaves this example alone)
    code = tmp_path / "m.py"
    code.write_text("import os\nfrom " + "schema.queries import get\n\ndef f():\n    import " + "ingest.load as load\n")
    bare = [n for n, _ in _imported_names(code) if n.split(".")[0] in LAYERS]
    assert bare == ["schema" + ".queries.get", "ingest" + ".load"]
