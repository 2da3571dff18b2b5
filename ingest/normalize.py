"""Kernel identity across graphs, runs and releases.

A generated kernel's name carries a per-graph counter (`triton_poi_fused_add_0`) and its source
carries that name, cache paths and a compiler-build hash. None of these change what the kernel
does, so they are stripped before naming (`signature`) and hashing (`source_hash`): the same
kernel in two runs or two releases then gets the same signature and the same hash.
"""

from __future__ import annotations

import hashlib
import re

_COUNTER_SUFFIX = re.compile(r"_\d+$")
# Quoted absolute paths (cache dirs, the 2.6 `#include "/tmp/.../<hash>.h"`); unquoted `/` is
# division or a comment in kernel code.
_QUOTED_PATH = re.compile(r"(?<=[\"'])/[^\"'\s]*")
# The Triton backend's build hash: differs per compiler build, not per kernel.
_BACKEND_HASH = re.compile(r"'backend_hash': '[0-9A-Fa-f]+'")


def kernel_signature(kernel_name: str) -> str:
    """`triton_poi_fused_add_0` -> `triton_poi_fused_add`; names without a counter are kept."""
    return _COUNTER_SUFFIX.sub("", kernel_name)


def normalize_kernel_source(source: str, kernel_name: str | None) -> str:
    if kernel_name:
        source = source.replace(kernel_name, "KERNEL")
    if '"/' in source or "'/" in source:
        source = _QUOTED_PATH.sub("<path>", source)
    return _BACKEND_HASH.sub("'backend_hash': '<hash>'", source)


def source_hash(source: str, kernel_name: str | None) -> str:
    normalized = normalize_kernel_source(source, kernel_name)
    return hashlib.blake2b(normalized.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
