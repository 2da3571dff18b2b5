"""Colours for the charts' lines: as many as there are lines, none repeated."""

from __future__ import annotations

import colorsys

# Tableau 10: distinct at a glance; more series get evenly spaced hues (palette)
TABLEAU = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac"]


def palette(n: int) -> list[str]:
    """n colours, none repeated: Tableau 10 for up to 10, else n hues evenly spaced around the circle,
    alternately darker and lighter so that neighbours differ in lightness too."""
    if n <= len(TABLEAU):
        return TABLEAU[:n]
    out = []
    for i in range(n):
        r, g, b = colorsys.hls_to_rgb(i / n, 0.42 if i % 2 else 0.62, 0.65)
        out.append(f"#{int(r * 255):02x}{int(g * 255):02x}{int(b * 255):02x}")
    return out
