"""torch-spyre kernel specs: the `sdsc_<N>.json` files (+ `bundle.mlir`) of one kernel folder.

Field meanings: ../shared/research/spyre_sdsc.md. One file is one OpSpec of the kernel, root key
`<N>_<opfunc>` (the older `execute/<kernel>/sdsc.json` form has the bare opfunc). Each becomes
one `kernels` row named by its root key (unique within the kernel folder, which the assembler
uses as the graph), and one `layouts` row per tensor (`labeledDs_` joined to the
`scheduleTree_` allocate node on `ldsIdx_`).

Choices, all read from the JSON rather than from op-name lists where the JSON allows:
- category: `matmul` when a compute op runs on the `pt` unit; `reduction` when a compute op
  lists its output among its inputs (the accumulator) or its output has a reduced dim
  (`scale_` < 0); `layout` for the pure data-movement ops `identity` and `ReStickifyOpHBM`; else
  `pointwise`.
- num_load / num_store: distinct tensors a compute op reads that it does not write / writes.
- tensor role (layout_kind): `output` if a compute op writes it, else `input`.
- size: the extent of each dim in the tensor's `layoutDimOrder_` order (from `N_`; the dim
  names are in details), 1 for a reduced dim. That order is the file's, not the host tensor's
  (add_3d lists [mb, out, x] for a (mb, x, out) tensor). stride is None: host strides and
  stride_map are not in the file.
- device_size (details): derived, not stored in the file: the dims of `layoutDimOrder_` in
  reverse, the stick dim counted in sticks, then the elements per stick. This reproduces the
  default torch-spyre layouts (host (d0, .., dn) -> [d1, .., dn sticks, d0, stick], e.g.
  (5,100,150) fp16 -> [100, 3, 5, 64]) for every example (they run with default layouts), and
  the sparse [1, 512, 64] of a reduced stick dim named in the examples' README.
- source_hash: blake2b of the JSON with `debug_handle_` (provenance), the root key's index
  and the HBM address symbols/offsets removed: they change with the call site, not the op.
"""

from __future__ import annotations

import hashlib
import re

import orjson

from inductor_warehouse.ingest.rows import Json, Parsed

# every era's spec file name: `execute/<kernel>/sdsc.json`, `sdsc_<N>.json`, and the May 2026
# `sdsc_<N>_<opfunc>.json` (torch-spyre #1965 named each file by its root key; #2250 went back)
SPEC_FILE = re.compile(r"^sdsc(?:_(\d+)(?:_[A-Za-z]\w*)?)?\.json$")
BUNDLE = "bundle.mlir"
_MATMUL_OPS = frozenset(("matmul", "batchmatmul", "batchmatmulfp8"))
_OP = re.compile(r"\bop=['\"](?P<op>[^'\"]+)")
_REDUCTION_TRUE = re.compile(r"\bis_reduction=True\b")
_EXECUTE = re.compile(r'sdsc_filename\s*=\s*"([^"]+)"')
_KERNEL_FOLDER = re.compile(r"^(?:[0-9a-f]{8}_)?(?P<kernel>sdsc_\w+_\d+)_[a-z0-9_]{8}$")
_LAYOUT_OPS = frozenset(("identity", "ReStickifyOpHBM"))


def compiler_kernel_name(folder: str) -> str:
    """The compiler kernel a kernel folder holds. torch-spyre makes the folder with
    `tempfile.mkdtemp(prefix=f"{kernel_name}_")` (8 random characters of [a-z0-9_] follow), since
    Aug 2026 with `f"{uuid4().hex[:8]}_{kernel_name}_"`; older releases and the kernel cache name
    it otherwise, and such a folder name is kept as it is."""
    m = _KERNEL_FOLDER.match(folder)
    return m["kernel"] if m else folder


def is_folder_file(name: str) -> bool:
    """A file of a torch-spyre kernel folder that the parser reads: a spec or the bundle."""
    return name == BUNDLE or SPEC_FILE.match(name) is not None


def parse_spyre_folder(files: dict[str, str], listed: frozenset[str] = frozenset()) -> Parsed:
    """`files`: {name: text} of the folder's readable files; `listed`: the names of its files that
    could not be read (already errors), so the bundle does not call them absent too."""
    parsed = Parsed()
    parsed.facts.update(device="spyre", backend="spyre")
    order = _execution_order(files, parsed)
    names = {path.rsplit("/", 1)[-1] for path in files}
    for path, text in sorted(files.items()):
        name = path.rsplit("/", 1)[-1]
        m = SPEC_FILE.match(name)
        if m is None:
            continue
        index = int(m.group(1)) if m.group(1) is not None else None
        try:
            spec = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            parsed.problem(f"{name}: not valid JSON: {exc}")
            continue
        if order is not None and name not in order:
            parsed.problem(f"{name} is not executed by bundle.mlir", severity="warning")
        _op_spec(parsed, name, index, spec, text, order.get(name) if order else None)
    # a partial copy of the folder: the bundle runs a spec that is not there, so the kernel is short of a step
    for name in order or ():
        if name not in names and name not in listed:
            parsed.problem(f"bundle.mlir executes {name}, which the kernel folder lacks")
    return parsed


def opspec_category(code: str) -> str | None:
    """The category of a kernel as torch-spyre's output code defines it (`async_compile.sdsc(name,
    [OpSpec(op=..., is_reduction=...), ...])`), by the precedence the spec files are read with."""
    specs = [(m["op"], _REDUCTION_TRUE.search(chunk) is not None)
             for chunk in code.split("OpSpec(")[1:] if (m := _OP.search(chunk))]
    if not specs:
        return None
    ops = [op for op, _ in specs]
    if any(op in _MATMUL_OPS for op in ops):
        return "matmul"
    if any(reduction for _, reduction in specs):
        return "reduction"
    if all(op in _LAYOUT_OPS for op in ops):
        return "layout"
    return "pointwise"


def _execution_order(files: dict[str, str], parsed: Parsed) -> dict[str, int] | None:
    for path, text in files.items():
        if path.rsplit("/", 1)[-1] == BUNDLE:
            order: dict[str, int] = {}
            for filename in _EXECUTE.findall(text):
                order.setdefault(filename, len(order))
            if not order:
                # a bundle that names no spec says nothing of which specs run: the bundle is the
                # damaged file (empty), or of a form not read here, never each spec's fault
                if text.strip():
                    parsed.problem("bundle.mlir names no sdsc_filename: its execution order is unknown",
                                   severity="warning")
                else:
                    parsed.problem("bundle.mlir is empty: its execution order is unknown")
                return None
            return order
    return None


def _op_spec(parsed: Parsed, name: str, index: int | None, spec: Json, text: str, bundle_site: int | None) -> None:
    if not isinstance(spec, dict) or len(spec) != 1:
        parsed.problem(f"{name}: expected one root key, found {len(spec) if isinstance(spec, dict) else 0}")
        return
    (root_key, root), = spec.items()
    prefix, _, rest = root_key.partition("_")
    opfunc = rest if prefix.isdigit() and rest else root_key
    if index is None and opfunc != root_key:
        index = int(prefix)
    if not isinstance(root, dict):
        parsed.problem(f"{name}: {root_key} is not an object")
        return
    dscs = root.get("dscs_")
    if not isinstance(dscs, list) or not dscs or not isinstance(dscs[0], dict) or len(dscs[0]) != 1:
        parsed.problem(f"{name}: no dscs_ entry")
        return
    if len(dscs) > 1:
        parsed.problem(f"{name}: {len(dscs)} dscs_ entries, reading the first", severity="warning")
    dsc = next(iter(dscs[0].values()))
    if not isinstance(dsc, dict):
        parsed.problem(f"{name}: dscs_[0] is not an object")
        return

    tensors = _tensors(dsc)
    compute = [op for op in dsc.get("computeOp_") or [] if isinstance(op, dict)]
    reads: set[object] = set()
    writes: set[object] = set()
    reducing_ops = 0
    for op in compute:
        inputs = {_lds_index(label) for label in op.get("inputLabeledDs") or []}
        outputs = {_lds_index(label) for label in op.get("outputLabeledDs") or []}
        reads |= inputs - outputs
        writes |= outputs
        reducing_ops += bool(inputs & outputs)
    # a broadcast input may carry a reduced dim (softmax's sub reads the row max); only a
    # reduced output makes the op a reduction
    reduces = reducing_ops > 0 or any(
        s < 0 for lds, _ in tensors if lds.get("ldsIdx_") in writes for s in _ints(lds.get("scale_"))
    )
    if any(op.get("exUnit") == "pt" for op in compute):
        category = "matmul"
    elif reduces:
        category = "reduction"
    elif opfunc in _LAYOUT_OPS:
        category = "layout"
    else:
        category = "pointwise"

    named = root.get("debug_handle_")
    handle = named if isinstance(named, dict) else {}
    work_division = root.get("numWkSlicesPerDim_")
    extents = {k[:-1]: v for k, v in (dsc.get("N_") or {}).items() if k.endswith("_") and k != "name_"}
    constants = dsc.get("constantInfo_")
    details = {
        "opfunc": opfunc,
        "index": index,
        "root_key": root_key,
        "num_cores": root.get("numCoresUsed_"),
        "work_division": work_division,
        "iteration_space": extents,
        "per_core_extents": _per_core(dsc),
        "ex_units": sorted({op.get("exUnit") for op in compute if op.get("exUnit")}),  # type: ignore[type-var]
        "compute_ops": [op.get("opFuncName") for op in compute],
        "primary_layouts": dsc.get("primaryDsInfo_"),
        "coordinate_masking": dsc.get("coordinateMasking_") or None,
        "constants": sorted(c.get("name_") for c in constants.values() if isinstance(c, dict))  # type: ignore[type-var]
        if isinstance(constants, dict) else [],
        "dynamic_shapes": "symbolDefinitions_" in root or "dimToSymbolMapping_" in dsc,
        "debug_handle": handle or None,
    }
    parsed.add(
        "kernels",
        {
            "kernel_name": root_key,
            "generated": True,
            "backend": "spyre",
            "category": category,
            "aten_ops": [handle["aten_op"]] if handle.get("aten_op") else None,
            "source_nodes": [str(x) for x in handle.get("ir_chain") or []] or None,
            "num_load": len(reads),
            "num_store": len(writes),
            "num_reduction": reducing_ops,
            "size_hints": None,
            "signature": opfunc,
            "source_hash": _source_hash(opfunc, root),
            "site": index if bundle_site is None else bundle_site,
            # torch-spyre's handle id hashes the OpSpec's provenance; the column is Inductor's per-kernel
            # counter, joined to lineage: another kind of id, kept in details (docs/ingesting.md)
            "debug_handle": None,
            "line": None,
            "details": orjson.dumps(details).decode(),
            "source": text,
        },
    )
    for labeled, alloc in tensors:
        _layout(parsed, root_key, labeled, alloc, writes, extents, dsc, work_division)


def _tensors(dsc: dict[str, Json]) -> list[tuple[dict[str, Json], dict[str, Json]]]:
    allocs = {n.get("ldsIdx_"): n for n in dsc.get("scheduleTree_") or []
              if isinstance(n, dict) and n.get("nodeType_") == "allocate"}
    return [(lds, allocs.get(lds.get("ldsIdx_"), {})) for lds in dsc.get("labeledDs_") or []
            if isinstance(lds, dict)]


def _layout(parsed: Parsed, kernel: str, labeled: dict[str, Json], alloc: dict[str, Json], writes: set[object],
            extents: dict[str, Json], dsc: dict[str, Json], work_division: Json) -> None:
    primary = (dsc.get("primaryDsInfo_") or {}).get(labeled.get("dsType_")) or {}
    dims = alloc.get("layoutDimOrder_") or primary.get("layoutDimOrder_") or []
    scale = _ints(labeled.get("scale_"))
    if len(scale) != len(dims):
        scale = [1] * len(dims)
    size = [1 if s < 0 else extents.get(d) for d, s in zip(dims, scale, strict=True)]
    stick_dims = primary.get("stickDimOrder_") or []
    stick_size = primary.get("stickSize_") or []
    component = alloc.get("component_")
    addresses = (alloc.get("startAddressCoreCorelet_") or {}).get("data_") or {}
    details = {
        "layoutDimOrder_": dims,
        "stickDimOrder_": stick_dims,
        "stickSize_": stick_size,
        "device_size": _device_size(dims, size, stick_dims, stick_size),
        "dataFormat_": labeled.get("dataFormat_"),
        "wordLength": labeled.get("wordLength"),
        "scale_": labeled.get("scale_"),
        "layout_class": labeled.get("dsType_"),
        "placement": component,  # hbm = device memory, lx = per-core scratchpad
        "memOrg_": sorted(labeled.get("memOrg_") or {}),
        "lx_offset": _first_address(addresses) if component == "lx" else None,
        "work_division": {d: work_division[d] for d in dims if d in work_division}
        if isinstance(work_division, dict) else None,
        "indirection": alloc.get("indirectAllocType_"),
        "back_gap": alloc.get("backGapCore_"),
        "padding": alloc.get("padding_"),
    }
    parsed.add(
        "layouts",
        {
            "buffer": labeled.get("dsName_"),
            "layout_kind": "output" if labeled.get("ldsIdx_") in writes else "input",
            "device": "spyre",
            "dtype": labeled.get("dataFormat_"),
            "size": [str(s) for s in size],
            "stride": None,
            "offset": None,
            "ir_class": None,
            "kernel_name": kernel,
            "details": orjson.dumps(details).decode(),
        },
    )


def _device_size(dims: Json, size: list[Json], stick_dims: Json, stick_size: Json) -> list[Json] | None:
    if len(stick_dims) != 1 or len(stick_size) != 1 or None in size or not stick_size[0]:
        return None
    stick = stick_size[0]
    device = [-(-n // stick) if d == stick_dims[0] else n for d, n in zip(dims, size, strict=True)]
    return device[::-1] + [stick]


def _per_core(dsc: dict[str, Json]) -> dict[str, int] | None:
    stage = (dsc.get("dataStageParam_") or {}).get("0") or {}
    steady = stage.get("ss_") if isinstance(stage, dict) else None
    if not isinstance(steady, dict):
        return None
    return {k[:-1]: v for k, v in steady.items() if k.endswith("_") and isinstance(v, int)}


def _lds_index(label: Json) -> object:
    """`Tensor2-idx2` -> 2."""
    _, _, idx = str(label).rpartition("-idx")
    return int(idx) if idx.isdigit() else label


def _ints(values: object) -> list[int]:
    return [v for v in values if isinstance(v, int)] if isinstance(values, list) else []


def _source_hash(opfunc: str, root: dict[str, Json]) -> str:
    body = {k: v for k, v in root.items() if k != "debug_handle_"}
    body["dscs_"] = [
        {op: _without_hbm_addresses(dsc) for op, dsc in entry.items()} if isinstance(entry, dict) else entry
        for entry in root.get("dscs_") or []
    ]
    canonical = orjson.dumps({opfunc: body}, option=orjson.OPT_SORT_KEYS)
    return hashlib.blake2b(canonical, digest_size=16).hexdigest()


def _without_hbm_addresses(dsc: Json) -> Json:
    """HBM start addresses are per-call-site symbols (or baked byte addresses); LX offsets are the
    kernel's scratchpad plan and stay."""
    if not isinstance(dsc, dict):
        return dsc
    tree = [
        {k: v for k, v in node.items() if k != "startAddressCoreCorelet_"}
        if isinstance(node, dict) and node.get("component_") == "hbm" else node
        for node in dsc.get("scheduleTree_") or []
    ]
    return {**dsc, "scheduleTree_": tree}


def _first_address(addresses: Json) -> int | None:
    """The first corelet's start address; one that is not a number (a damaged spec) is
    unknown, not a failed run."""
    first = next(iter(addresses.values()), None) if isinstance(addresses, dict) else None
    try:
        return int(first)  # type: ignore[arg-type]  # anything: what int() refuses is unknown
    except (TypeError, ValueError, OverflowError):
        return None
