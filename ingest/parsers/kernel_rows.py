"""Rows of kernels, as Inductor's Python output code and AOTInductor's C++ code both define and call them.

A generated kernel's row reads its metadata from the Triton decorator (category, loads, stores,
size hints, details) or its C++ body; an extern call site's row is the callee as written.
"""

from __future__ import annotations

import re
from collections import Counter

import orjson

from inductor_warehouse.ingest.normalize import kernel_signature, source_hash
from inductor_warehouse.ingest.rows import CollectiveRow, Json, KernelRow, Parsed
from inductor_warehouse.schema.kernel_names import category_of_prefix

SOURCE_NODES = re.compile(r"#\s*(?:\w+ )*Source Nodes: \[(?P<nodes>.*?)\], Original ATen: \[(?P<aten>.*)\]\s*$")
SOURCE_NODES_TAG = "Source Nodes: ["
HANDLE_TAG = "[Provenance debug handles]"
HANDLE = re.compile(r"#\s*\[Provenance debug handles\] (?P<kernel>.+):(?P<handle>\d+)\s*$")
DEVICE_STR = re.compile(r"device_str='(?P<device>[a-z]+)")
QUOTES = "'''"
_ODD_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # str.splitlines breaks lines there too
_HEURISTIC = re.compile(r"^@triton_heuristics\.(?P<kind>\w+)\(", re.M)
_TRITON_PREFIX = re.compile(r"^triton_(?P<prefix>[a-z]{3})_")
_CPP_REDUCTION = re.compile(r"\btmp_acc\d+")
# a CPU template kernel (cpp_gemm/bmm/grouped_gemm/flex_attention templates of max-autotune and
# freezing) defines the micro-GEMM it tiles its loops around, which no fused loop kernel does
_CPP_TEMPLATE = re.compile(r"^inline void \w*micro_gemm\w*\(", re.M)
_SIZE_HINTS = re.compile(r"size_hints=(?P<hints>\{[^}]*\}|\[[^\]]*\])")
_META_INT = {key: re.compile(rf"'{key}': (?P<v>\d+)") for key in ("num_load", "num_store", "num_reduction")}
# detail -> (the text before its value, the value's pattern, the text after it): found by str.find,
# which is cheaper than a regex search of the whole decorator for each
_DETAILS = {
    "reduction_hint": ("reduction_hint=ReductionHint.", re.compile(r"\w+"), ""),
    "tile_hint": ("tile_hint=TileHint.", re.compile(r"\w+"), ""),
    "num_warps": ("\nnum_warps=", re.compile(r"\d+"), ""),  # at a line start
    "num_stages": ("\nnum_stages=", re.compile(r"\d+"), ""),
    "grid_type": ("'grid_type': '", re.compile(r"\w+"), "'"),
}
_MUTATED = re.compile(r"'mutated_arg_names': \[(?P<v>[^\]]*)\]")
# torch-spyre's SpyreAsyncCompile.sdsc builds the kernel its sdsc folder reader calls `spyre`
_BACKENDS = {"triton": "triton", "cpp": "cpp", "cpp_pybinding": "cpp", "sdsc": "spyre"}
# the device a backend's kernels run on, whatever the allocations say
BACKEND_DEVICES = {"cpp": "cpu", "spyre": "spyre"}
_JIT = "\n@triton.jit"
# a `Source Nodes` comment's lists: (post-grad nodes, ATen ops)
SourceNodes = tuple[list[str], list[str]]


def plain_line_breaks(text: str) -> str:
    """The text with every line break str.splitlines knows made a b"\\n", so line numbers agree with an editor's."""
    if any(c in text for c in _ODD_BREAKS):
        return "\n".join(text.splitlines())
    return text


def offset_of_line(text: str, line: int) -> int:
    """Where 1-based line `line` of text starts, or -1 past its end."""
    pos = 0
    for _ in range(line - 1):
        pos = text.find("\n", pos) + 1
        if pos == 0:
            return -1
    return pos


def add_kernels(parsed: Parsed, generated: dict[str, KernelRow], externs: list[KernelRow]) -> None:
    """rows['kernels']: the generated kernels in definition order, then the extern call sites; and
    rows['collectives'] from those."""
    for row in (*generated.values(), *externs):
        parsed.add("kernels", row)
    for collective in collective_rows(externs):
        parsed.add("collectives", collective)


def source_node_lists(m: re.Match[str]) -> SourceNodes:
    return _names(m["nodes"]), _names(m["aten"])


def _names(text: str) -> list[str]:
    return [x for x in map(str.strip, text.split(",")) if x]


def generated_row(name: str, method: str, site: int, comment: SourceNodes | None, source: str | None, lineno: int,
                  closing: str | None) -> KernelRow:
    backend = _BACKENDS.get(method, method)
    details: dict[str, Json] = {}
    category = num_load = num_store = num_reduction = size_hints = None
    if source is not None:
        if backend == "triton":
            header = _decorator_text(source)
            category = _triton_category(name, header)
            num_load, num_store, num_reduction = (_meta_int(header, key) for key in _META_INT)
            size_hints = _size_hints(header)
            lines = "\n" + header  # a `before` of "\n..." then finds a value at a line start, the first too
            for key, detail in _DETAILS.items():
                v = _detail(lines, *detail)
                if v is not None:
                    details[key] = int(v) if v.isdigit() else v
            m = _MUTATED.search(header)
            if m:
                details["mutated_arg_names"] = [x.strip().strip("'") for x in m["v"].split(",") if x.strip()]
        elif backend == "cpp":
            category = ("template" if _CPP_TEMPLATE.search(source) else
                        "reduction" if _CPP_REDUCTION.search(source) else "pointwise")
    elif backend == "triton":
        category = _triton_category(name, "")
    nodes, aten = comment if comment else (None, None)
    return {
        "kernel_name": name,
        "generated": True,
        "backend": backend,
        "category": category,
        "aten_ops": aten,
        "source_nodes": nodes,
        "num_load": num_load,
        "num_store": num_store,
        "num_reduction": num_reduction,
        "size_hints": size_hints,
        "signature": kernel_signature(name),
        "source_hash": source_hash(source, name) if source is not None and closing is not None else None,
        "site": site,
        "debug_handle": None,
        "line": lineno,
        "details": details,  # serialised once call counts are known
        "source": source if closing is not None else None,
    }


# collective ops among the extern calls: functional collectives (`torch.ops._c10d_functional.*`,
# their C shim `aoti_torch_<device>__c10d_functional_*`), legacy c10d ops, symmetric memory
_COLLECTIVE = re.compile(r"(?:\.|_)(?:_c10d_functional(?:_autograd)?|c10d|symm_mem)[._]")


def collective_rows(kernels: list[KernelRow]) -> list[CollectiveRow]:
    """rows['collectives']: the collective extern calls, in call order."""
    return [{"seq": i, "op": k["kernel_name"], "source": "output_code", "compile_id": None, "line": k["line"]}
            for i, k in enumerate(k for k in kernels  # an extern row's name is its callee's, never None
                                  if not k["generated"] and _COLLECTIVE.search(k["kernel_name"] or ""))]


def extern_row(callee: str, site: int, comment: SourceNodes | None, debug_handle: int | None, lineno: int) -> KernelRow:
    nodes, aten = comment if comment else (None, None)
    return {
        "kernel_name": callee,
        "generated": False,
        "backend": "extern",
        "category": "extern",
        "aten_ops": aten,
        "source_nodes": nodes,
        "num_load": None,
        "num_store": None,
        "num_reduction": None,
        "size_hints": None,
        "signature": callee,
        "source_hash": None,
        "site": site,
        "debug_handle": debug_handle,
        "line": lineno,
        "details": None,
        "source": None,
    }


def _decorator_text(source: str) -> str:
    """The imports and heuristics decorator: everything the metadata is read from."""
    end = source.find(_JIT)
    return source if end == -1 else source[:end]


def _detail(text: str, before: str, value: re.Pattern[str], after: str) -> str | None:
    """The first value written right after `before` (and followed by `after`) in `text`."""
    at = text.find(before)
    while at != -1:
        m = value.match(text, at + len(before))
        if m and text.startswith(after, m.end()):
            return m.group()
        at = text.find(before, at + 1)
    return None


def _triton_category(name: str, source: str) -> str | None:
    m = _HEURISTIC.search(source)
    if m:
        return m["kind"]
    m = _TRITON_PREFIX.match(name)
    return category_of_prefix(m["prefix"]) if m else None


def _meta_int(source: str, key: str) -> int | None:
    m = _META_INT[key].search(source)
    return int(m["v"]) if m else None


def _size_hints(source: str) -> str | None:
    """`{'x': 8192, 'r0_': 1024}` (a list before 2.6) as JSON text."""
    m = _SIZE_HINTS.search(source)
    if m is None:
        return None
    try:
        return orjson.dumps(orjson.loads(m["hints"].replace("'", '"'))).decode()
    except orjson.JSONDecodeError:
        return None


def device_facts(parsed: Parsed, generated: dict[str, KernelRow], devices: Counter[str]) -> None:
    accelerators = [d for d, _ in devices.most_common() if d != "cpu"]
    if accelerators:
        parsed.facts["device"] = accelerators[0]
    elif devices:
        parsed.facts["device"] = "cpu"
    backends = Counter(row["backend"] for row in generated.values())
    if backends:
        parsed.facts["backend"] = backends.most_common(1)[0][0]
