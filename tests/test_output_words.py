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


# the pages hunt's tables at 120 columns (/work/hunt/pages/cli_runs_tty.txt, cli_compare_nightlies.txt):
# 14 columns of `iwh runs`, and compare's per-workload rows of the 2022 torchbench nightlies
RUNS_ROW = {"run_id": "31377b7e4abaf423", "model": "mobilenetv2_100",
            "workload": "mobilenetv2_100 [device=cpu harness=performance mode=infer]", "kind": "compile",
            "compiler_version": "2.14.1+cu130", "device": "cpu", "backend": "cpp", "graphs": 19, "kernels": 46,
            "extern_calls": 44, "fusion_rate": 0.227, "failures": 1, "errors": 0, "started_at": "2026-11-27 06:58:29"}


def test_a_table_too_wide_for_the_terminal_prints_records_with_every_value_whole():
    text = table(pl.DataFrame([RUNS_ROW] * 3), width=120)
    assert max(len(line) for line in text.splitlines()) <= 120
    for value in ("31377b7e4abaf423", "mobilenetv2_100", "2.14.1+cu130", "2026-11-27 06:58:29", "22.7%"):
        assert value in text, value  # each on one line, never split


def test_long_names_break_at_their_punctuation_and_short_words_stay_whole():
    keys = ["shufflenet_v2_x1_0 [harness=performance]", "BERT_pytorch [harness=accuracy]",
            "timm_vision_transformer_large_patch16 [harness=performance]"]
    frame = pl.DataFrame({"workload": keys * 2, "metric": ["compilation_latency"] * 6,
                          "base": ["26.51"] * 6, "kernels": [3] * 6, "head": ["fail_accuracy"] * 6,
                          "verdict": ["insufficient data"] * 6, "how": ["n=1/1"] * 6,
                          "run_id": ["7492a105118fa8e3"] * 6})
    for width in (100, 120):
        text = table(frame, width=width)
        lines = text.splitlines()
        assert max(len(line) for line in lines) <= width, width
        assert _unwrapped(text, 0) == [k.replace(" ", "") for k in keys * 2], width
        assert "7492a105118fa8e3" in text and "26.51" in text  # no punctuation: never broken
        assert ("fail_accuracy" in text) == (width == 120)  # a short word breaks only when the width needs it,
        assert _unwrapped(text, 4) == ["fail_accuracy"] * 6  # and then at its punctuation
        for line in lines[2:]:  # a long name is broken only where it has punctuation or a space
            first = line[:line.index("  ")] if "  " in line else line
            for k in keys:
                for word in k.split():
                    if first and word.startswith(first) and first != word:
                        assert first[-1] in "_/.-=,:", (width, first)


def test_prose_lines_wrap_at_spaces():
    from inductor_warehouse.schema.output import paragraph
    text = ("benchmark harness: HUD's suite numbers of the compared runs (each workload's samples by its "
            "metric's one rule, then HUD's rule, one point a side; gated)")
    lines = paragraph(text, width=120).splitlines()
    assert len(lines) == 2 and max(map(len, lines)) <= 120 and " ".join(lines) == text
    assert paragraph(text, width=None) == text
