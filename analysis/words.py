"""How the analyses name counts and workloads to people."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 model`, `2 models`; `many` where the plural is not the word plus s (`series`)."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


def model_key(model: str | None, config: dict) -> str:
    """`mlp [mode=train]`: a model and the labels that tell its workload from the model's others."""
    return (model or "(no model)") + (" [" + " ".join(f"{k}={v}" for k, v in sorted(config.items())) + "]" if config else "")
