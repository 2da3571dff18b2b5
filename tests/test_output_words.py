"""Words people read: tables that fit the terminal without cutting what tells rows apart, rates as
percentages, counts as integers, plurals that agree."""

from __future__ import annotations

import re

import polars as pl

from inductor_warehouse.analysis.words import plural
from inductor_warehouse.schema.output import table

# two workloads of one model that differ only at their end (the demo's transformer training runs)
WORKLOADS = ["transformer [batch=8 device=cpu dtype=fp32 mode=train variant=aggressive_fusion]",
             "transformer [batch=8 device=cpu dtype=fp32 mode=train variant=default]"]


def _frame() -> pl.DataFrame:
    return pl.DataFrame({
        "run_id": ["85872d0e659739eb", "4db86735f2461ee2"], "workload": WORKLOADS,
        "kernel": ["triton_per_fused__native_batch_norm_legit_no_training_hardtanh_12",
                   "triton_per_fused__native_batch_norm_legit_no_training_hardtanh_13"],
        "kernels": [11, 11], "fusion_rate": [0.2894736842, 1.0],
        "reason": ["Graph Break Reason: " + "a long explanation " * 30, None],
    })


def _unwrapped(text: str, column: int) -> list[str]:
    """The cells of one column read back from a table: a row starts where its `kernels` number is (a
    number never wraps), its cell's lines are joined; spaces dropped (a wrap may fall on one)."""
    lines = text.splitlines()
    rule = next(i for i, line in enumerate(lines) if line and set(line) <= {"-", " "})
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[rule])]
    kernels = spans[3]
    cells: list[str] = []
    for line in lines[rule + 1:]:
        start, end = spans[column]
        piece = line[start:end].replace(" ", "")
        if line[kernels[0]:kernels[1]].strip():
            cells.append(piece)
        else:
            cells[-1] += piece
    return cells


def test_a_table_fits_the_width_and_keeps_identity_cells_whole():
    frame = _frame()
    for width in (80, 120):
        text = table(frame, width=width)
        assert max(len(line) for line in text.splitlines()) <= width, width
        for column, name in ((0, "run_id"), (1, "workload"), (2, "kernel")):
            assert _unwrapped(text, column) == [v.replace(" ", "") for v in frame[name]], (width, name)
        assert "…" in text  # prose (the reason) is what gets an ellipsis
        assert "…" not in "".join(_unwrapped(text, 1) + _unwrapped(text, 2))


def test_without_a_width_nothing_wraps():
    text = table(_frame(), width=None)
    assert len(text.splitlines()) == 4 and all(w in text for w in WORKLOADS)


def test_rates_are_percentages_counts_integers():
    text = table(_frame(), width=None)
    assert " 28.9%" in text and "100.0%" in text and "0.289" not in text
    assert re.search(r"\b11\b", text) and "11.0" not in text


def test_plurals_agree():
    assert plural(1, "change point") == "1 change point" and plural(2, "change point") == "2 change points"
    assert plural(1, "series", "series") == "1 series" and plural(3, "series", "series") == "3 series"
