"""How a compiler version string is ordered as a release, for the layers that order versions in
Python; views/30_version_key.sql's version_key is the same rule in SQL (tests/test_rules_once.py
holds them together)."""

from __future__ import annotations

import re

# the leading dotted numbers: a '.devYYYYMMDD' nightly or a '+cu124' build sorts with its release
_LEADING = re.compile(r"[0-9]+(?:\.[0-9]+)*")


def release_parts(version: str | None) -> tuple[int, ...]:
    """(2, 13, 0) for '2.13.0+cpu', (2, 6, 0) for '2.6.0.dev20240915', () for a text that starts with
    no number (before every release)."""
    m = _LEADING.match(version or "")
    return tuple(int(x) for x in m.group().split(".")) if m else ()


def release_key(version: str | None) -> tuple[tuple[int, ...], str]:
    """Compiler versions in release order: 2.6.0 before 2.13.0, a build's local part after its release."""
    return release_parts(version), version or ""
