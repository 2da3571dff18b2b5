"""The provenance viewer's model of one graph: its pre-grad graph, post-grad graph and generated code
as numbered lines, and which lines are which nodes, kernels and model source lines, so that choosing
any one of them finds its relatives in the other panels (as tlparse's `--inductor-provenance`
highlighter does, from the warehouse's rows instead of one log).

Nodes are the lines of a graph's text that assign them (`name: "f32[4]" = ...`, or `name = ...`);
a node's model line is the `# File: PATH:LINE in fn, code: ...` comment above it (FX prints one
above each group of nodes sharing a stack trace, after a blank line). A kernel's lines in the code
are its definition (`name = async_compile.triton(...)` to its closing quotes; C++ `void name(` to
its closing brace) and its call sites in `call()` / `run_impl()`: with a debug handle, the call
after the `[Provenance debug handles] name:handle` comment, else every line naming it there.
Lineage rows say which nodes a kernel came from; rows from stack traces (`torch_trace`,
`kernel_information`, `spyre_provenance`) say its model lines directly.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass, field
from typing import TypedDict

from inductor_warehouse.analysis.canned_rows import Row

NODE = re.compile(r'^\s*([A-Za-z_]\w*)\s*(?::\s*"[^"]*")?\s*=\s')
FILE_COMMENT = re.compile(r"#\s*File:\s*(.+?):(\d+) in ([^,]+), code: (.*)$")
# where a wrapper calls its kernels: Python's call() (a method of a Runner class since 2.10), AOTInductor's run_impl
CALLS = re.compile(r"^\s*def call\(|::run_impl\(")
PY_KERNEL_DEF = re.compile(r"^(\w+) = async_compile\.\w+\(")
CPP_KERNEL_DEF = re.compile(r'^(?:extern "C"\s+)?(?:static inline\s+)?(?:AOTI_NOINLINE\s+)?void\s+(?:call_)?(\w+)\(')
HANDLE_COMMENT = re.compile(r"\[Provenance debug handles\]\s+(\S+):(\d+)")
WORD = re.compile(r"[A-Za-z_][\w.]*")
# lineage rows whose model line is the kernel's own (a stack trace), not a node's
LINE_SOURCES = ("torch_trace", "kernel_information", "spyre_provenance")


class ModelLine(TypedDict):
    """A model source line: its file, its number and its code, where something carries it."""
    file: str
    line: int
    code: str | None


@dataclass
class Panel:
    kind: str  # pre_grad_graph | post_grad_graph | output_code
    lines: list[str]
    items: dict[str, list[int]] = field(default_factory=dict)  # node or kernel -> its lines (1-based)
    model_lines: dict[int, str] = field(default_factory=dict)  # line -> the model line (`file:line`) of its node


@dataclass
class Provenance:
    pre: Panel
    post: Panel
    code: Panel
    # (pre-grad node, post-grad node, kernel) chains, None where a link is unknown
    links: list[tuple[str | None, str | None, str | None]]
    kernel_lines: dict[str, list[str]]  # kernel -> model lines its stack traces name
    model: dict[str, ModelLine]  # `file:line` -> {file, line, code}
    kernels: list[str]  # every kernel the lineage or the code names, code order first

    def as_json(self) -> dict[str, object]:
        return {
            "panels": {p.kind: {"lines": p.lines, "items": p.items, "model": {str(k): v for k, v in p.model_lines.items()}}
                       for p in (self.pre, self.post, self.code)},
            "links": self.links, "kernelLines": self.kernel_lines, "model": self.model, "kernels": self.kernels,
        }

    def related(self, kind: str, name: str) -> dict[str, set[str]]:
        """What choosing a kernel, a post-grad node (`post`), a pre-grad node (`pre`) or a model line
        (`line`, `file:line`) highlights: {"kernel", "post", "pre", "line"} -> names. The viewer's
        script does the same walk (tests hold the two to each other)."""
        out: dict[str, set[str]] = {"kernel": set(), "post": set(), "pre": set(), "line": set()}
        if kind == "line":
            out["line"].add(name)
            out["pre"] |= {n for n, ls in _by_item(self.pre).items() if name in ls}
            out["post"] |= {n for n, ls in _by_item(self.post).items() if name in ls}
            out["kernel"] |= {k for k, ls in self.kernel_lines.items() if name in ls}
            for pre, post, kernel in self.links:
                if kernel and (pre in out["pre"] or post in out["post"]):
                    out["kernel"].add(kernel)
            return out
        out[kind].add(name)
        for pre, post, kernel in self.links:
            if {"kernel": kernel, "post": post, "pre": pre}[kind] == name:
                for group, member in (("pre", pre), ("post", post), ("kernel", kernel)):
                    if member is not None:  # a link's unknown end
                        out[group].add(member)
        if kind == "pre":  # a pre-grad node's post-grad nodes, then the kernels they became
            out["kernel"] |= {k for _, p, k in self.links if p in out["post"] and k is not None}
        out["line"] |= {ln for k in out["kernel"] for ln in self.kernel_lines.get(k, ())}
        for panel, names in ((self.pre, out["pre"]), (self.post, out["post"])):
            by_item = _by_item(panel)
            out["line"] |= {ln for n in names for ln in by_item.get(n, ())}
        return out


def _by_item(panel: Panel) -> dict[str, set[str]]:
    return {name: {panel.model_lines[i] for i in lines if i in panel.model_lines} for name, lines in panel.items.items()}


def graph_panel(kind: str, text: str | None) -> tuple[Panel, dict[str, ModelLine]]:
    """A graph's lines, its nodes' lines, and the model line above each node; with the model lines met."""
    panel = Panel(kind, (text or "").split("\n"))
    model: dict[str, ModelLine] = {}
    current = None
    for i, line in enumerate(panel.lines, 1):
        stripped = line.strip()
        if not stripped:
            current = None
            continue
        m = FILE_COMMENT.search(stripped) if stripped.startswith("#") else None
        if m:
            current = f"{m.group(1)}:{m.group(2)}"
            model.setdefault(current, {"file": m.group(1), "line": int(m.group(2)), "code": m.group(4).strip()})
            panel.model_lines[i] = current
            continue
        if stripped.startswith("#"):
            continue
        node = NODE.match(line)
        if node:
            panel.items.setdefault(node.group(1), []).append(i)
            if current:
                panel.model_lines[i] = current
    return panel, model


def code_panel(text: str | None, kernels: dict[str, set[int | None]]) -> Panel:
    """The generated code's lines and each kernel's (its definition and call sites). `kernels`: the
    kernels to find (the graph's and those lineage names; the code's own debug-handle comments say
    which call is which)."""
    panel = Panel("output_code", (text or "").split("\n"))
    lines = panel.lines
    start = next((i for i, line in enumerate(lines) if CALLS.search(line)), 0)
    # definitions: from the line that names it to its closing quotes or brace
    i = 0
    while i < len(lines):
        m = PY_KERNEL_DEF.match(lines[i]) or CPP_KERNEL_DEF.match(lines[i])
        if m and m.group(1) in kernels:
            end = _definition_end(lines, i, m.re is PY_KERNEL_DEF)
            first = i
            while first > 0 and lines[first - 1].lstrip().startswith(("#", "//")):  # the comments above it
                first -= 1
            panel.items.setdefault(m.group(1), []).extend(range(first + 1, end + 2))
            i = end
        i += 1
    # call sites, with their debug-handle comments where the code has them
    handled: dict[str, set[int]] = {}
    pending: list[tuple[str, int]] = []
    for n in range(start, len(lines)):
        line = lines[n]
        h = HANDLE_COMMENT.search(line)
        if h:
            pending.append((h.group(1), n + 1))
            continue
        for word in set(WORD.findall(line)):
            name = _kernel_named(word, kernels)
            if name is None:
                continue
            comment = next((c for c in pending if c[0] == name), None)
            if comment is not None:
                pending.remove(comment)
                handled.setdefault(name, set()).update((comment[1], n + 1))
            else:
                handled.setdefault(name, set()).add(n + 1)
    for name, found in handled.items():
        panel.items.setdefault(name, []).extend(sorted(found))
    for name in panel.items:
        panel.items[name] = sorted(set(panel.items[name]))
    return panel


def _kernel_named(word: str, kernels: Container[str]) -> str | None:
    """The kernel a dotted word of the code names: itself (`extern_kernels.mm`), or less its
    attributes (`triton_poi_fused_0.run`), or AOTInductor's `call_<kernel>` wrapper."""
    while True:
        for name in (word, word[len("call_"):] if word.startswith("call_") else None):
            if name in kernels:
                return name
        if "." not in word:
            return None
        word = word.rpartition(".")[0]


def _definition_end(lines: list[str], i: int, python: bool) -> int:
    """The last line (0-based) of the kernel defined at line i: Python's closing quotes; C++'s
    closing brace, or the `;` of a declaration (AOTInductor declares its kernels before defining them)."""
    end = i
    opened = False
    while end + 1 < len(lines):
        line = lines[end]
        if python:
            if end > i and PY_KERNEL_DEF.match(line):
                return end - 1
            if end > i and line.startswith(("'''", '"""')):
                return end
        else:
            opened = opened or "{" in line
            if end > i and opened and line.startswith("}"):
                return end
            if not opened and line.rstrip().endswith(";"):
                return end
        end += 1
    return end


def sources_panel(sources: dict[str, str]) -> Panel:
    """Kernels' own sources one after another, each under a `# kernel NAME` line: its lines are the kernel's."""
    panel = Panel("output_code", [])
    for name, text in sources.items():
        start = len(panel.lines) + 1
        panel.lines += [f"# kernel {name}", *text.split("\n"), ""]
        panel.items[name] = list(range(start, len(panel.lines)))
    return panel


def build(texts: dict[str, str], lineage: list[Row], kernel_names: list[str],
          kernel_sources: dict[str, str] | None = None) -> Provenance:
    """The viewer's model of a graph from its texts (graph_texts kind -> text), its lineage rows
    (source_node, post_grad_node, kernel_name, debug_handle, user_file, user_line, source) and the
    kernels of its code (kernels rows, in code order). A graph without code text (a Spyre kernel
    folder: specs, no wrapper) shows `kernel_sources` (kernel -> its kept source) one after another."""
    pre, model = graph_panel("pre_grad_graph", texts.get("pre_grad_graph"))
    post, more = graph_panel("post_grad_graph", texts.get("post_grad_graph"))
    for k, v in more.items():
        model.setdefault(k, v)
    handles: dict[str, set[int | None]] = {k: set() for k in kernel_names}
    links: list[tuple[str | None, str | None, str | None]] = []
    kernel_lines: dict[str, list[str]] = {}
    for r in lineage:
        kernel = r.get("kernel_name")
        if kernel:
            handles.setdefault(kernel, set()).add(r.get("debug_handle"))
        if r.get("source") in LINE_SOURCES and r.get("user_file") and r.get("user_line") is not None:
            key = f"{r['user_file']}:{int(r['user_line'])}"  # a frame's NULLs make it a float
            model.setdefault(key, {"file": r["user_file"], "line": int(r["user_line"]), "code": r.get("source_code")})
            if kernel and key not in kernel_lines.setdefault(kernel, []):
                kernel_lines[kernel].append(key)
        if r.get("source_node") or r.get("post_grad_node"):
            chain = (r.get("source_node"), r.get("post_grad_node"), kernel or None)
            if chain not in links:
                links.append(chain)
    if texts.get("output_code") or not kernel_sources:
        code = code_panel(texts.get("output_code"), handles)
    else:
        code = sources_panel(kernel_sources)
        # torch-spyre's sidecar names the compiled kernel (the folder: this graph) whose specs these
        # are: a header line of its own, and its model lines are its specs' too
        for outer in [k for k in kernel_lines if k not in kernel_sources]:
            code.lines.insert(0, f"# compiled kernel {outer}: the specs below")
            code.items = {name: [n + 1 for n in lines] for name, lines in code.items.items()}
            code.items[outer] = [1]
            for name in kernel_sources:
                kernel_lines.setdefault(name, [])
                kernel_lines[name] += [ln for ln in kernel_lines[outer] if ln not in kernel_lines[name]]
    return Provenance(pre, post, code, links, kernel_lines, dict(sorted(model.items(), key=_model_order)),
                      list(dict.fromkeys([*kernel_names, *handles])))


def _model_order(item: tuple[str, ModelLine]) -> tuple[str, int]:
    return item[1]["file"], item[1]["line"]


def missing_texts(texts: dict[str, str]) -> list[str]:
    """The panels a graph has no text for, each with what would have recorded it."""
    why = {
        "pre_grad_graph": "the pre-grad graph: TORCH_TRACE records it (`before_pre_grad_graph`); a debug tree alone has none",
        "post_grad_graph": "the post-grad graph: TORCH_COMPILE_DEBUG=1 (fx_graph_transformed.py) or TORCH_TRACE",
        "output_code": "the generated code: TORCH_COMPILE_DEBUG=1 (output_code.py) or TORCH_TRACE",
    }
    return [why[k] for k in why if not texts.get(k)]


NO_PROVENANCE = ("This graph has no provenance: nothing links its kernels to nodes or model lines. Inductor records it "
                 "with `INDUCTOR_PROVENANCE=1` (or `torch._inductor.config.trace.provenance_tracking_level = 1`) "
                 "together with `TORCH_TRACE=<dir>` (node mappings and the kernels' stack traces) or "
                 "`TORCH_COMPILE_DEBUG=1` (inductor_provenance_tracking_node_mappings.json); `iwh capture` sets "
                 "all three.")
