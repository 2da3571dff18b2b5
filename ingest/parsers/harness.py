"""PyTorch's benchmark harness (`benchmarks/dynamo/{timm_models,huggingface,torchbench}.py`): its CSVs.

What a harness job writes (read off its `common.py` from 2023 to 2026, and off real runs of it):
- `--performance`: `<output>.csv`, one row per model: `dev,name,batch_size,[tag],speedup,abs_latency,
  [baseline,speedup_vs_baseline],compilation_latency,compression_ratio,eager_peak_mem,dynamo_peak_mem,
  [cache_lookup_latency]` and Dynamo's counters (`calls_captured,unique_graphs,[fallbacks_to_eager],
  graph_breaks,unique_graph_breaks,[autograd_captures,autograd_compiles],[cudagraph_skips]`): columns
  came and went over the releases, so every column is read by its header, and all of them are kept.
  A model that failed has a short row (`dev,name,0,0.0,0.0`): the harness pads rows to the header
  with "0". The harness of 2022-2023 wrote `dev,name,0,0.0000` under any header instead, and a
  blank header line when that model was the file's first (harness_era).
- `--accuracy`: `dev,name,batch_size,[tag],accuracy` (pass, pass_due_to_skip, eager_variation,
  fail_accuracy, fail_to_run, eager_fail_to_run, model_fail_to_load, timeout, ...), the same
  counters, and `compilation_latency` (2025 on).
- `<output>_compilation_metrics.csv`: `dev,name,batch_size` and seconds per `dynamo_timed` function
  (`torch._dynamo.utils.compile_times(repr="csv", aggregate=True)`); the names differ by release, and
  by model: each row's are in its own process's order, under one model's header (timings_unplaced).
- `<output>.json` beside each CSV: one JSON record a metric (the PyTorch benchmark database's
  format), naming what the CSV leaves to its file name: mode, dtype, backend and suite ("origins").
- `--coverage` (2022): Dynamo's capture counts a model (`graphs,graph_calls,captured_ops,...`).
- `ci_expected_accuracy/<config>_<suite>_<mode>.csv` (PyTorch's repository, what CI's graph-break
  gate compares against): `name,accuracy,graph_breaks,...`, no `dev`.

Which file is which is decided by its header (vendors' runners: harness_runner); the suite, mode,
dtype, backend and device of a row come from the JSON sidecar, else from the words of the file name (CI names its files
`<backend>_<suite>_<dtype>_<mode>_<device>_<performance|accuracy>.csv`), else stay NULL (the
run's labels may say them: see the `harness_rows` view).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator, Mapping
from typing import Any, cast

import orjson

from inductor_warehouse.ingest.parsers import harness_era, harness_runner
from inductor_warehouse.ingest.parsers.harness_names import (FIELDS, SUITES, Fields, Named, file_fields, folder_fields,
                                                             unread_words)
from inductor_warehouse.ingest.parsers.manifest import Label
from inductor_warehouse.ingest.rows import HarnessResultRow, Parsed

SOURCE = "harness"
FLOAT_COLUMNS = ("speedup", "abs_latency", "compilation_latency", "compression_ratio", "eager_peak_mem",
                 "dynamo_peak_mem", "cache_lookup_latency", "baseline", "speedup_vs_baseline")
INT_COLUMNS = ("batch_size", "calls_captured", "unique_graphs", "graph_breaks", "unique_graph_breaks",
               "autograd_captures", "autograd_compiles", "cudagraph_skips", "fallbacks_to_eager")
TEXT_COLUMNS = {"dev": "device", "name": "model", "tag": "tag", "accuracy": "accuracy"}

# what an editor or pandas' utf-8-sig writes before a CSV it saves
BOM = "\ufeff".encode()
_JSON_HEAD = re.compile(rb'^\s*\{\s*"benchmark"\s*:\s*\{')
# columns only a --performance CSV writes: a header with one of them and no `speedup` is a
# performance CSV that lost its speedup column, never a compilation-metrics CSV
PERFORMANCE_ONLY = {"speedup", "abs_latency", "compression_ratio", "eager_peak_mem", "dynamo_peak_mem",
                    "cache_lookup_latency", "speedup_vs_baseline"}
# what the harness writes of every model in --performance and --accuracy: Dynamo's counters and the
# compile's latency; a compilation-metrics CSV has none of them
RESULT_COLUMNS = {"compilation_latency", *INT_COLUMNS[1:]}
# the columns HUD's numbers and CI's gate read: a row whose value there is no number is damaged
GATED = {"speedup", "abs_latency", "compilation_latency", "compression_ratio", "eager_peak_mem", "dynamo_peak_mem",
         "calls_captured", "unique_graphs", "graph_breaks", "unique_graph_breaks", "fallbacks_to_eager"}
# the columns every compilation-metrics row opens with, before its timings
METRICS_KEYS = ("dev", "name", "batch_size")
# the kinds the harness itself writes, a row at a time and each ended by a newline (csv's \r\n)
WRITTEN_BY_HARNESS = ("performance", "accuracy", "compile_times", "coverage")
# the fields whose absence is worth a warning, by kind: CI's expected values name no dtype or device
# of their own, and `--coverage` counts are grouped by no mode or dtype
NEEDED_FIELDS = {"expected": ("suite", "backend", "mode"), "coverage": ("suite", "backend")}


def csv_kind(header: list[str]) -> str | None:
    """performance | accuracy | compile_times | coverage | expected, from a CSV's header; None for any
    other CSV. A header of results without the column that makes its kind (speedup, accuracy) says
    performance: `missing_column` tells it is damaged. A compilation-metrics CSV is the rest of
    `dev,name,batch_size,...`: neither `--coverage`'s counters nor runner.py's merged table of
    speedups, a column a backend (harness_era)."""
    h = [c.strip() for c in header]
    cols = set(h)
    if harness_runner.is_reordered(h):
        # a runner's table (harness_runner): results of the harness, never its compilation metrics
        return "accuracy" if "accuracy" in cols else "performance" if cols & (PERFORMANCE_ONLY | RESULT_COLUMNS) \
            else None
    if h[:3] == ["dev", "name", "batch_size"] or h[:2] == ["dev", "name"]:
        if cols & PERFORMANCE_ONLY:
            return "performance"
        if "accuracy" in cols:
            return "accuracy"
        if cols & RESULT_COLUMNS:
            return "performance"
        if harness_era.COVERAGE_COLUMNS <= cols:
            return "coverage"
        if harness_era.is_runner_table(h):
            return None
        return "compile_times" if len(h) > 3 and h[2] == "batch_size" else None
    if h[:1] == ["name"] and (cols & {"accuracy", "graph_breaks"} or harness_runner.is_dtype_table(h)):
        return "expected"  # CI's expected values; 2022's name only graph_breaks; torch-xpu-ops' a dtype a column
    return None


def missing_column(kind: str, header: list[str]) -> str | None:
    """The column a CSV of `kind` cannot be read without, when its header lacks it."""
    need = {"performance": "speedup", "accuracy": "accuracy"}.get(kind)
    return need if need and need not in header else None


def harness_csv_kind(head: bytes, filename: str = "") -> str | None:
    """The kind of the harness CSV whose first bytes are `head` (csv_kind; '' for a file of 2022-2023
    whose header is blank and whose rows do not say it); None for any other file."""
    line = head.removeprefix(BOM).split(b"\n", 1)[0].rstrip(b"\r")
    if not line.strip(b" ,\t"):
        return harness_era.sniff_blank_header(head, filename)
    try:
        return csv_kind(next(csv.reader([line.decode("utf-8")])))
    except (UnicodeDecodeError, StopIteration, csv.Error):
        return None


def is_harness_csv(head: bytes) -> bool:
    return harness_csv_kind(head) is not None


# The harness's modes, as its CSVs' kinds: a process of one is a workload apart from one of the
# other (accuracy runs a smaller batch with fallback_random on).
MODES = ("performance", "accuracy")


def run_mode(kinds: set[str] | frozenset[str], inductor_config: str | None) -> str | None:
    """Whether a compile was the harness's performance or accuracy run: the kind of the harness CSVs
    it lies beside when they are of one mode; beside both (one folder for a whole job), its Inductor
    config says, as the harness sets `fallback_random` in accuracy runs only; None when nothing says."""
    modes = set(kinds) & set(MODES)
    if len(modes) == 1:
        return modes.pop()
    if not modes or not inductor_config:
        return None
    try:
        config = orjson.loads(inductor_config)
    except orjson.JSONDecodeError:
        return None
    value = config.get("fallback_random") if isinstance(config, dict) else None
    return None if not isinstance(value, bool) else "accuracy" if value else "performance"


def is_harness_json(head: bytes) -> bool:
    """The harness's JSON lines: `{"benchmark": {...}, "model": {...}, "metric": {...}}` a line."""
    return bool(_JSON_HEAD.match(head)) and b'"model"' in head


def parse_harness_json(text: str) -> Parsed:
    """Per model, what the records say of it: {"models": {name: {mode, dtype, backend, suite}}}."""
    parsed = Parsed()
    models: dict[str, Fields] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError as e:
            parsed.problem(f"benchmark record is not valid JSON: {e}", lineno)
            continue
        model = rec.get("model") if isinstance(rec, dict) else None
        bench = rec.get("benchmark") if isinstance(rec, dict) else None
        if not isinstance(model, dict) or not isinstance(bench, dict) or not isinstance(model.get("name"), str):
            parsed.problem("benchmark record without a model name", lineno, "warning")
            continue
        if model["name"] in models:
            continue
        origins = model.get("origins")
        suite = origins[0] if isinstance(origins, list) and origins and isinstance(origins[0], str) else None
        models[model["name"]] = {
            "mode": _text(bench.get("mode")), "dtype": harness_runner.json_dtype(bench),
            "backend": _text(model.get("backend")), "suite": SUITES.get(suite or "", suite or None),
        }
    parsed.facts["models"] = models
    return parsed


def parse_harness_csv(text: str, filename: str, sidecar: dict[str, Fields] | None = None,
                      given: Mapping[str, Label] | None = None, folders: tuple[str, ...] = ()) -> Parsed:
    """One harness_results row per CSV row, every column kept (`columns`, as written). A row's suite,
    backend, mode, dtype and device come from, in order: its own columns (`dev`; a runner's suite,
    dtype, mode: harness_runner), what the JSON records beside the CSV say of its model (`sidecar`,
    parse_harness_json), the file's name, the run's labels (`given`: its manifest, `--label`), the
    folders the file lies in (`folders`, nearest first), a later one's more specific word winning;
    what none says stays NULL, with a warning. A damaged file or row (a performance
    CSV without speedup, a row cut short or longer than its header, a value HUD reads that is no
    number) is an error and stores nothing: it can never be a model's latest value. The 2022-2023
    harness's row of a model whose process failed is no damage: the model, failed."""
    parsed = Parsed()
    text = text.removeprefix("\ufeff")
    reader = csv.reader(io.StringIO(text))
    header = _header(parsed, reader, text, filename)
    if header is None:
        return parsed
    kind = parsed.facts["kind"]
    named = _named(filename, given or {}, folders)
    cut = kind in WRITTEN_BY_HARNESS and text and not text.endswith(("\n", "\r"))
    last = text.count("\n") + 1 if cut else None
    suites: set[str | None] = set()
    unknown: set[str] = set()
    unplaced_lines: list[int] = []
    wider_lines: list[int] = []
    try:
        for fields in reader:
            lineno = reader.line_num
            if not any(f.strip() for f in fields):
                continue  # PyTorch's expected CSVs put blank lines between rows
            if kind == "expected" and fields[0].lstrip().startswith("#"):
                continue  # a comment line, as CI's readers of these files skip them
            names, shape = _shape(fields, header, kind, lineno == last)
            if shape == "damaged":
                parsed.problem(names[0], lineno)
                continue
            {"unplaced": unplaced_lines, "wider": wider_lines}.get(shape, []).append(lineno)
            row = _row(parsed, kind, names, fields, lineno)
            if row is None:
                continue
            if shape == "failed":
                _failed_process(row, kind)
            for one in harness_runner.placed(row, header, (sidecar or {}).get(row["model"]) or {}, named):
                unknown.update(k for k in NEEDED_FIELDS.get(kind, FIELDS) if one[k] is None)
                suites.add(one["suite"])
                parsed.add("harness_results", cast(HarnessResultRow, one))
    except csv.Error as e:
        parsed.problem(f"CSV cut or damaged, rows after it are lost: {e}", reader.line_num)
    if wider_lines:
        parsed.problem(harness_runner.wider(wider_lines, header), wider_lines[0], "warning")
    _warnings(parsed, unplaced_lines, unknown, filename)
    if len(suites - {None}) == 1:
        parsed.facts["suite"] = (suites - {None}).pop()
    return parsed


def _warnings(parsed: Parsed, unplaced_lines: list[int], unknown: set[str], filename: str) -> None:
    """What a file's rows lack, said once for the file."""
    if unplaced_lines:
        parsed.problem(_unplaced(unplaced_lines), unplaced_lines[0], "warning")
    if unknown:
        shown = [k for k in FIELDS if k in unknown]
        unread = unread_words(filename) if "backend" in unknown else []
        why = f" (its words {', '.join(map(repr, unread))} are none of a backend's)" if unread else ""
        parsed.problem(f"{', '.join(shown)} unknown for some rows: named by no JSON record beside the file, nor its "
                       f"name {filename!r}{why}, the run's labels or its folders; stored NULL (a manifest or `--label "
                       f"{shown[0]}=...` names {'it' if len(shown) == 1 else 'them'})", None, "warning")


def _header(parsed: Parsed, reader: Iterator[list[str]], text: str, filename: str) -> list[str] | None:
    """The CSV's header, its kind in parsed.facts; None (and the problem said) when the file is none
    of the harness's or is damaged. A blank first line is 2022-2023's empty header: the rows' field
    count names their columns (harness_era.blank_header)."""
    try:
        header = [c.strip() for c in next(reader)]
    except (StopIteration, csv.Error):
        parsed.problem("no header: not a benchmark harness CSV")
        return None
    if not any(header):
        era = harness_era.blank_header(text, filename)
        if isinstance(era, str):
            parsed.problem(era, 1)
            return None
        parsed.facts["kind"] = era[0]
        return era[1]
    kind = csv_kind(header)
    if kind is None:
        parsed.problem(f"header {','.join(header)[:120]!r} is none of the harness's CSVs")
        return None
    parsed.facts["kind"] = kind
    if need := missing_column(kind, header):
        parsed.problem(f"a {kind} CSV without its {need} column (header {','.join(header)[:120]!r}): "
                       "damaged, none of its rows is stored")
        return None
    if len(set(header)) != len(header):
        parsed.problem("the header names a column twice; the later one is kept", 1, "warning")
    return header


def _shape(fields: list[str], header: list[str], kind: str, at_end: bool) -> tuple[list[str], str]:
    """The columns a row is read by, and what it is: '' (its header's), `unplaced` (timings_unplaced),
    `failed` (harness_era.failed_process_row), `no_result` or `wider` (a runner's row of another width
    than its header: harness_runner.row_names); `damaged` with why in place of the columns."""
    if not at_end and (runner := harness_runner.row_names(fields, header)):
        return runner[0], "no_result" if runner[1] else "wider"
    if not at_end and kind == "compile_times" and timings_unplaced(fields, header):
        return header[:len(METRICS_KEYS)], "unplaced"
    if not at_end and kind in WRITTEN_BY_HARNESS and harness_era.failed_process_row(fields):
        return header[:len(fields)], "failed"
    damage = _cut(fields, header, at_end)
    return ([damage], "damaged") if damage else (header, "")


def _cut(fields: list[str], header: list[str], unterminated: bool) -> str | None:
    """Why a row is damaged by its shape: cut short, longer than its header, or the file's last line
    without the newline the harness ends every row with."""
    if len(fields) != len(header):
        why = "cut short" if len(fields) < len(header) else "written under another header"
        return f"{len(fields)} fields where the header has {len(header)}: {why}, not stored"
    if unterminated:
        return "the file ends inside this row (no newline after it): cut short, not stored"
    return None


def timings_unplaced(fields: list[str], header: list[str]) -> bool:
    """Whether a compilation-metrics row's timings cannot be named by the header. The harness writes
    `dev,name,batch_size` and the seconds of every function its model's process timed, in the order
    that process first timed them (`compile_times(repr="csv")`), under the header of another model:
    one `output_csv` of common.py appends each row as it comes under the file's first header (wider
    or narrower than it), the other rewrites the file under the widest header seen, padding shorter
    rows with "0" (a timing is always written with decimals, so a bare 0 is padding). A row of
    another width, or padded, timed other functions than the header names, and which of its values
    is which is written nowhere."""
    if len(fields) != len(header):
        return True
    return len(fields) > len(METRICS_KEYS) and fields[-1].strip() == "0"


def _unplaced(lines: list[int]) -> str:
    return (f"{harness_runner.rows_at(lines)} timed other functions than the "
            "header names (the harness writes one model's header, and each model's timings in the order its "
            "process first timed them, a shorter row padded with 0): which value is which function's cannot be "
            "known, so these rows keep their model, device and batch size and store no timing")


def _failed_process(row: dict[str, Any], kind: str) -> None:
    """A model whose process failed (harness_era.failed_process_row): no speedup (0, as HUD reads a
    model that did not run) and an accuracy that fails; the columns stay as written."""
    if kind == "performance":
        row["speedup"] = 0.0
    elif kind == "accuracy":
        row["accuracy"] = harness_era.FAILED_PROCESS


def _named(filename: str, given: Mapping[str, Label], folders: tuple[str, ...]) -> Fields:
    """The fields a file's name, the run's labels and its folders say, the first that says one winning."""
    named = Named()
    for key, value in file_fields(filename).items():
        named.put(key, value, "file name")
    for key in FIELDS:
        label = given.get(key)
        named.put(key, str(label) if label is not None and label != "" else None, "labels")
    below = folder_fields(list(folders))
    for key, value in below.values.items():
        named.put(key, value, below.said_by.get(key, "folder"))
    return named.values


def _row(parsed: Parsed, kind: str, header: list[str], fields: list[str], lineno: int) -> dict[str, Any] | None:
    """A row of the CSV, its columns named by the harness's tables (dynamic keys: a HarnessResultRow
    once parse_harness_csv has filled it)."""
    values = dict(zip(header, (f.strip() for f in fields), strict=False))
    if not values.get("name"):
        parsed.problem("row without a model name", lineno)
        return None
    row: dict[str, Any] = {"kind": kind, "line": lineno, "columns": values}
    for column, key in TEXT_COLUMNS.items():
        row[key] = values.get(column) or None
    bad: list[tuple[str, str, bool]] = []
    for column in INT_COLUMNS:
        row[column] = _number(values, column, integer=True, bad=bad)
    for column in FLOAT_COLUMNS:
        row[column] = _number(values, column, integer=False, bad=bad)
    gated = [b for b in bad if b[0] in GATED]
    if gated:
        parsed.problem("; ".join(f"{c} {t[:40]!r} is not a {'whole ' if i else ''}number" for c, t, i in gated)
                       + ": damaged, not stored", lineno)
        return None
    for column, text, integer in bad:
        parsed.problem(f"{column} {text[:40]!r} is not a {'whole ' if integer else ''}number; stored NULL",
                       lineno, "warning")
    return row


def _number(values: dict[str, str], column: str, integer: bool, bad: list[tuple[str, str, bool]]) -> float | None:
    text = values.get(column)
    if text is None or text == "":
        return None
    try:
        v = float(text)
    except ValueError:
        bad.append((column, text, integer))
        return None
    if v != v or v in (float("inf"), float("-inf")):
        return None if integer else v
    if integer:
        if not v.is_integer():
            bad.append((column, text, integer))
            return None
        return int(v)
    return v


def _text(v: object) -> str | None:
    return v if isinstance(v, str) and v else None
