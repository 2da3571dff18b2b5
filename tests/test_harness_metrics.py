"""The benchmark harness's `*_compilation_metrics.csv`: `dev,name,batch_size` and seconds per
`dynamo_timed` function, each model's in the order its process first timed them, under the header
of one model (PyTorch's benchmarks/dynamo/common.py, `output_csv`: appended as it came under the
first header, or the file rewritten under the widest header with shorter rows padded with "0").
A healthy file gives no error: a row whose timings the header cannot name keeps its model, device
and batch size, stores no timing, and the file says so once, as a warning.

Real files (tests/fixtures/SOURCES.md): davidberard98/dynamo_benchmark_results's Nov 2022 nightly
(appended rows of 12 and 13 fields under a header of 13, and one of 4), and pytorch/pytorch
@15a7c584's (a row padded with a bare 0)."""

from __future__ import annotations

import csv
from pathlib import Path

from inductor_warehouse.ingest.parsers.harness import parse_harness_csv

HERE = Path(__file__).parent / "fixtures" / "harness" / "compilation_metrics"
NIGHTLY = HERE / ("davidberard98-dynamo_benchmark_results/day_326_22_11_22_performance_float32_285/"
                  "inductor_torchbench_float32_training_cuda_performance_compilation_metrics.csv")
PADDED = HERE / "pytorch-15a7c584" / "speedup_inductor_compilation_metrics.csv"


def _read(path: Path):
    """(header, [(line, fields)]) as Python's csv module reads the file."""
    with path.open(newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], [(i + 2, r) for i, r in enumerate(rows[1:])]


def test_appended_rows_of_other_widths_keep_their_model_and_no_timing():
    header, rows = _read(NIGHTLY)
    parsed = parse_harness_csv(NIGHTLY.read_text(), NIGHTLY.name)
    other = [line for line, r in rows if len(r) != len(header)]
    assert len(other) == 21 and len(rows) == 49  # the file's own shape, counted by csv
    # no error; one warning naming how many rows and where the first is
    assert [(p.severity, p.line) for p in parsed.problems] == [("warning", other[0])]
    assert parsed.problems[0].message.startswith("21 rows (line 3, 4, 5, 6, 9 and 16 more) timed other functions")
    got = {r["line"]: r for r in parsed.rows["harness_results"]}
    assert sorted(got) == [line for line, _ in rows]  # every model stored
    for line, r in rows:
        row = got[line]
        assert (row["device"], row["model"], row["batch_size"]) == (r[0], r[1], int(r[2]))
        if line in other:
            assert row["columns"] == dict(zip(("dev", "name", "batch_size"), r[:3], strict=True))
        else:
            assert row["columns"] == dict(zip(header, r, strict=True))  # as the header names them


def test_a_row_padded_with_a_bare_zero_stores_no_timing():
    header, rows = _read(PADDED)
    padded = [line for line, r in rows if r[-1] == "0"]
    assert padded == [3] and all(len(r) == len(header) for _, r in rows)
    parsed = parse_harness_csv(PADDED.read_text(), PADDED.name)
    assert not [p for p in parsed.problems if p.severity == "error"]
    # (its name says no suite: a warning of its own says that)
    assert [(p.severity, p.line) for p in parsed.problems if "timed other functions" in p.message] == [("warning", 3)]
    got = {r["line"]: r for r in parsed.rows["harness_results"]}
    assert got[3]["columns"] == {"dev": "cuda", "name": "mixnet_l", "batch_size": "128"}
    assert got[2]["columns"] == dict(zip(header, rows[0][1], strict=True))
    assert len(got) == len(rows)


def test_a_row_cut_by_a_killed_writer_is_still_an_error():
    """The file's last line without its newline: the harness ends every row with one."""
    text = NIGHTLY.read_text()
    cut = text[:text.rindex("\n", 0, len(text) - 1) + 12]
    parsed = parse_harness_csv(cut, NIGHTLY.name)
    last = cut.count("\n") + 1
    assert [(p.line, p.severity) for p in parsed.problems if p.severity == "error"] == [(last, "error")]
    assert last not in {r["line"] for r in parsed.rows["harness_results"]}
