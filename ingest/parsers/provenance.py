"""inductor_provenance_tracking_node_mappings.json (debug dir) and its trace-artifact twin; and the
kernel -> post-grad node file written beside it (`parse_kernel_nodes`).

`{"preToPost": {pre: [post]}, "postToPre": {post: [pre]}, "cppCodeToPost": {"<kernel>:<handle>":
[post]}, "postToCppCode": {post: ["<kernel>:<handle>"]}}`; the trace form adds `"version": 2.0`,
and v1 (torch 2.7/2.8, no version) has kernel keys without `:<handle>`. The key is named
`cppCodeToPost` for Triton and extern kernels too.

rows['lineage']: one per (pre-grad node, post-grad node, kernel) chain, both directions of each
mapping merged. A post node with no kernel keeps a row with kernel NULL, one with no pre node a
row with source_node NULL; a pre node with no post node and a kernel with no post node keep a
row too. Empty node names (pattern-rewritten nodes) count as unknown (NULL). `kernel:handle` is
split on the last colon (names may hold colons); a key without a numeric suffix (v1) gets
debug_handle NULL. user_file/user_line stay NULL here: stack traces come with the trace artifacts.

`inductor_triton_kernel_to_post_grad_nodes.json` (2.7) and `inductor_generated_kernel_to_post_grad_nodes.json`
(2.8 on, till the node mappings held it alone) are `{kernel: [post]}`, written whenever the debug
trace is on: the very dict the node mappings give as `cppCodeToPost` (torch/_inductor/debug.py), which
are written only when a pre-grad graph was recorded. Read as that mapping alone, they give the same
rows the node mappings' kernels give.
"""

from __future__ import annotations

from typing import Any

from inductor_warehouse.ingest.rows import Parsed

_MAPPINGS = ("preToPost", "postToPre", "cppCodeToPost", "postToCppCode")
KERNEL_NODE_FILES = ("inductor_triton_kernel_to_post_grad_nodes.json", "inductor_generated_kernel_to_post_grad_nodes.json")
_UNKNOWN: list[str | None] = [None]  # no node or kernel known


def parse_provenance(text: str | bytes) -> Parsed:
    parsed = Parsed()
    doc = parsed.json_object(text, "provenance mapping")
    return parsed if doc is None else _lineage(parsed, doc)


def parse_kernel_nodes(text: str | bytes) -> Parsed:
    """The kernel -> post-grad node file (KERNEL_NODE_FILES): the node mappings' `cppCodeToPost` alone."""
    parsed = Parsed()
    doc = parsed.json_object(text, "kernel to post-grad node mapping")
    return parsed if doc is None else _lineage(parsed, {"cppCodeToPost": doc})


def _lineage(parsed: Parsed, doc: dict[str, Any]) -> Parsed:  # noqa: C901 - one loop over the record's kinds
    maps: dict[str, dict[str, list[str]]] = {}
    for key in _MAPPINGS:
        value = doc.get(key, {})
        if not isinstance(value, dict) or not all(_is_name_list(v) for v in value.values()):
            parsed.problem(f"provenance `{key}` is not an object of name lists; ignored")
            value = {}
        maps[key] = value
    if "version" in doc:
        parsed.facts["provenance_version"] = str(doc["version"])

    pre_of = _both_ways(maps["postToPre"], maps["preToPost"])
    kernels_of = _both_ways(maps["postToCppCode"], maps["cppCodeToPost"])
    seen: set[tuple[str | None, str | None, str | None]] = set()

    def add(pre: str | None, post: str | None, kernel_key: str | None) -> None:
        # nodes made by pattern rewrites can carry an empty pre-grad name: no node known
        pre, post = pre or None, post or None
        chain = (pre, post, kernel_key)
        if chain in seen:
            return
        seen.add(chain)
        kernel, handle = _split_handle(kernel_key) if kernel_key is not None else (None, None)
        parsed.add("lineage", {"source_node": pre, "post_grad_node": post, "kernel_name": kernel,
                               "debug_handle": handle, "user_file": None, "user_line": None, "source": "provenance"})

    for post in dict.fromkeys([*pre_of, *kernels_of]):
        for pre in pre_of.get(post) or _UNKNOWN:
            for kernel_key in kernels_of.get(post) or _UNKNOWN:
                add(pre, post, kernel_key)
    for pre, posts in maps["preToPost"].items():
        if not posts:
            add(pre, None, None)
    for kernel_key, posts in maps["cppCodeToPost"].items():
        if not posts:
            add(None, None, kernel_key)
    return parsed


def _is_name_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) for x in value)


def _both_ways(forward: dict[str, list[str]], backward: dict[str, list[str]]) -> dict[str, list[str]]:
    """post -> [x] from `post -> [x]` and from the inverse `x -> [post]`, first-seen order kept."""
    out: dict[str, dict[str, None]] = {}
    for post, xs in forward.items():
        bucket = out.setdefault(post, {})
        for x in xs:
            bucket[x] = None
    for x, posts in backward.items():
        for post in posts:
            out.setdefault(post, {})[x] = None
    return {post: list(xs) for post, xs in out.items()}


def _split_handle(key: str) -> tuple[str, int | None]:
    name, sep, handle = key.rpartition(":")
    if sep and handle.isdigit():
        return name, int(handle)
    return key, None
