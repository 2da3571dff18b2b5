"""Triton's cache folder (TRITON_CACHE_DIR, which `iwh capture` keeps as `triton_cache/`).

One folder per compiled binary, named by its hash, holding `<kernel>.json` (the metadata read here),
the IR of each stage (`.ttir`, `.ttgir`, `.llir`, `.ptx`), the binary (`.cubin`, `.hsaco`) and a
`__grp__<kernel>.json` listing them. The metadata (Triton 3.x) holds the launch options and what
compilation found: `name`, `num_warps`, `num_stages`, `num_ctas`, `maxnreg`, `target` ({backend,
arch, warp_size}), `shared` (bytes of shared memory), `triton_version` (3.3 on), ... It does not
hold registers or spills (Triton reads them when the binary loads; Inductor's autotuner logs them:
`torch_logs`), nor the block sizes (constexprs of the source). A kernel Inductor autotuned over N
configs has up to N folders, one per binary; which one ran is told by the trace or the log.
"""

from __future__ import annotations


from inductor_warehouse.ingest.rows import Parsed

SOURCE = "triton_cache"


def is_triton_metadata(head: bytes) -> bool:
    text = head.lstrip()
    return text.startswith(b"{") and b'"num_warps"' in text and b'"target"' in text and b'"name"' in text


def parse_triton_metadata(data: bytes, cache_key: str | None) -> Parsed:
    parsed = Parsed()
    meta = parsed.json_object(data, "Triton cache metadata")
    if meta is None:
        return parsed
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        parsed.problem("Triton cache metadata without a kernel name")
        return parsed
    target = meta.get("target")
    if isinstance(target, dict) and target.get("backend") is not None:
        target_text = f"{target.get('backend')}:{target.get('arch')}"
    elif isinstance(target, (list, tuple)) and len(target) >= 2:  # older releases: [backend, arch, warp_size]
        target_text = f"{target[0]}:{target[1]}"
    else:
        target_text = None
    parsed.add("triton_kernels", {
        "compile_id": None, "kernel_name": name, "source": SOURCE, "cache_key": cache_key,
        "num_warps": _int(meta.get("num_warps")), "num_stages": _int(meta.get("num_stages")),
        "num_ctas": _int(meta.get("num_ctas")), "maxnreg": _int(meta.get("maxnreg")),
        "shared_bytes": _int(meta.get("shared")), "target": target_text,
        "triton_version": meta.get("triton_version") if isinstance(meta.get("triton_version"), str) else None,
        "config": None, "chosen": None, "autotune_state": None, "num_configs": None, "compile_time_us": None,
        "n_regs": None, "n_spills": None,
        # paths of this machine (libdevice) say nothing of the kernel
        "metadata": {k: v for k, v in meta.items() if k != "extern_libs"},
    })
    return parsed


def _int(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None
