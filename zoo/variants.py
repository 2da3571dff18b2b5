"""Inductor config variants, by name: each a set of `torch._inductor.config` settings.

Names match the shared GPU corpus, so runs made here and there compare by variant.
"""

VARIANTS: dict[str, dict[str, object]] = {
    "default": {},
    "max_autotune": {"max_autotune": True},
    "no_epilogue_fusion": {"epilogue_fusion": False},
    "aggressive_fusion": {"aggressive_fusion": True},
    "max_fusion_size_8": {"max_fusion_size": 8},
    "no_vectorize": {"cpp.simdlen": 1},
}


def split_known(config, settings: dict[str, object]) -> tuple[dict[str, object], list[str]]:
    """Settings this torch's config knows, and the names it does not (options come and go)."""
    known, missing = {}, []
    for key, value in settings.items():
        owner = config
        *parents, leaf = key.split(".")
        for part in parents:
            owner = getattr(owner, part, None)
        if owner is not None and hasattr(owner, leaf):
            known[key] = value
        else:
            missing.append(key)
    return known, missing
