"""How the analyses name counts and workloads to people."""

from __future__ import annotations

from collections.abc import Mapping

from inductor_warehouse.schema.words import plural

__all__ = ["model_key", "plural"]


def model_key(model: str | None, config: Mapping[str, str]) -> str:
    """`mlp [mode=train]`: a model and the labels that tell its workload from the model's others."""
    return (model or "(no model)") + (" [" + " ".join(f"{k}={v}" for k, v in sorted(config.items())) + "]" if config else "")
