"""What vendors' CI scripts write around the benchmark harness's CSVs (read off their code; the
harness's own files are harness.py's):

- intel/torch-xpu-ops' runner (`.github/scripts/benchmarks/run_inductor.py`, `collect_results`) runs
  the harness one model a process and appends that model's row to
  `inductor-results-<suite>-<dtype>-<mode>-<device>-<scenario>.csv`, reordered as
  `dev,suite,name,dtype,mode,scenario,batch_size` and the harness's columns after its batch size; an
  earlier version wrote `scenario,suite,dtype,mode` before the harness's whole row. The file's header
  is its first model's: a model with no result gets a row of its own width (`..., batch_size,
  accuracy` with `timeout`, `core_dump`, `Memory>0.9` or `crashed`; `..., batch_size, speedup,
  inductor_latency, eager_latency` all 0), batch size 0, under whatever header the file has, and
  when that model came first its short header is the one every later row is written under.
- torch-xpu-ops' expected accuracy (`.github/ci_expected_accuracy/[rolling|lts/]inductor_<suite>_<mode>.csv`,
  read by its `check_expected.py` with `#` comment lines): `name,float32,bfloat16,float16,amp_bf16,
  amp_fp16`, a model's expected accuracy under each dtype.
- The harness's JSON records say `dtype: "amp"` for `--amp --amp-dtype bfloat16|float16` alike; the
  precision is in `extra_info.amp_dtype`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inductor_warehouse.ingest.parsers.harness_names import AMP_DTYPES, FIELDS, Fields, file_fields, more_specific

# the harness's columns every row of its results opens with
HARNESS_KEYS = ("dev", "name", "batch_size")
# the runner's columns that name the row's group, as the harness's file names would
GROUP_COLUMNS = ("suite", "dtype", "mode")
# `--amp-dtype` as the JSON records write it, in the spelling of the file names' dtypes
AMP_DTYPE_NAMES = {"bfloat16": AMP_DTYPES["bf16"], "float16": AMP_DTYPES["fp16"]}


def is_reordered(header: list[str]) -> bool:
    """A header that holds the harness's columns in another order than the harness writes them, or
    with a runner's columns before its batch size."""
    return set(HARNESS_KEYS) <= set(header) and header[:2] != list(HARNESS_KEYS[:2])


def results_at(header: list[str]) -> int | None:
    """Where the harness's result columns start in a runner's table (after its batch size); None for
    the harness's own header."""
    return header.index("batch_size") + 1 if is_reordered(header) else None


def row_names(fields: list[str], header: list[str]) -> tuple[list[str], bool] | None:
    """(the columns it can be read by, failed) of a runner's row whose width is not its header's; None
    for any other row. A shorter row of batch size 0 is a model the runner gave no result (failed);
    a wider one was written under the short header of such a model. Either way, the columns up to the
    first result column (`accuracy`, `speedup`, the first of every row the harness and the runner
    write) are the row's; what follows was written under other names."""
    start = results_at(header)
    if start is None or len(fields) == len(header) or len(fields) <= start:
        return None
    if len(fields) < len(header):
        if fields[start - 1].strip() != "0":
            return None  # cut short
        return header[:start + 1], True
    return header[:start + 1], False


def column_fields(values: Mapping[str, str]) -> Fields:
    """suite, dtype and mode a runner's columns say of their row, spelled as the file names' words."""
    out: Fields = {}
    for key in GROUP_COLUMNS:
        value = (values.get(key) or "").strip()
        out[key] = (file_fields(value + ".csv")[key] or value) if value else None
    return out


def is_dtype_table(header: list[str]) -> bool:
    """torch-xpu-ops' expected accuracy: `name` and a column a dtype."""
    rest = header[1:]
    return header[:1] == ["name"] and bool(rest) and all(file_fields(c + ".csv")["dtype"] == c for c in rest)


def json_dtype(bench: Mapping[str, object]) -> str | None:
    """The dtype a JSON record's benchmark says: its `dtype`, `amp` made `amp_bf16`/`amp_fp16` where
    `extra_info.amp_dtype` says which."""
    dtype = bench.get("dtype")
    if not isinstance(dtype, str) or not dtype:
        return None
    extra = bench.get("extra_info")
    amp = extra.get("amp_dtype") if isinstance(extra, dict) else None
    return AMP_DTYPE_NAMES.get(amp, dtype) if dtype == "amp" and isinstance(amp, str) else dtype


def placed(row: dict[str, Any], header: list[str], meta: Fields, named: Fields) -> list[dict[str, Any]]:
    """A harness row (of an expected table a dtype a column, a row each) with its group: what its own
    columns say (`dev`; a runner's suite, dtype and mode), else its JSON records (`meta`), else its
    name, labels and folders (`named`), a later one's more specific word winning (more_specific)."""
    said = column_fields(row["columns"]) if is_reordered(header) else {}
    rows = by_dtype(row, header) if row["kind"] == "expected" else [row]
    for one in rows:
        for key in FIELDS:
            one[key] = more_specific(more_specific(one.get(key) or said.get(key), meta.get(key)), named[key])
    return rows


def by_dtype(row: dict[str, Any], header: list[str]) -> list[dict[str, Any]]:
    """An expected row as rows of one dtype each: torch-xpu-ops' tables give a model's accuracy under
    each dtype column; PyTorch's name no dtype and are one row."""
    if not is_dtype_table(header):
        return [row]
    values = row["columns"]
    return [{**row, "dtype": c, "accuracy": values[c]} for c in header[1:] if values.get(c)]


def rows_at(lines: list[int]) -> str:
    """`3 rows (line 2, 5, 9)`: the rows a file's warning is about."""
    shown = ", ".join(map(str, lines[:5])) + (f" and {len(lines) - 5} more" if len(lines) > 5 else "")
    return f"{len(lines)} {'row' if len(lines) == 1 else 'rows'} (line {shown})"


def wider(lines: list[int], header: list[str]) -> str:
    """The warning of a runner's table whose later rows are wider than its header (row_names)."""
    first = header[results_at(header) or 0]
    return (f"{rows_at(lines)} wider than the header: the runner wrote the header of the file's first model, "
            "which had no result, and every later row under it; these rows keep their columns up to "
            f"{first!r} and store none after it, whose names are written nowhere")
