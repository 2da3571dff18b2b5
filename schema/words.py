"""How counts read to people, for every layer above: `1 run`, `2 runs`."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 model`, `2 models`, `1,073 files`; `many` where the plural is not the word plus s (`series`)."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"
