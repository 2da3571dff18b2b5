"""PyTorch's benchmark harness (`benchmarks/dynamo/{timm_models,huggingface,torchbench}.py`): its CSVs.

What a harness job writes (read off its `common.py` from 2023 to 2026, and off real runs of it):
- `--performance`: `<output>.csv`, one row per model: `dev,name,batch_size,[tag],speedup,abs_latency,
  [baseline,speedup_vs_baseline],compilation_latency,compression_ratio,eager_peak_mem,dynamo_peak_mem,
  [cache_lookup_latency]` and Dynamo's counters (`calls_captured,unique_graphs,[fallbacks_to_eager],
  graph_breaks,unique_graph_breaks,[autograd_captures,autograd_compiles],[cudagraph_skips]`): columns
  came and went over the releases, so every column is read by its header, and all of them are kept.
  A model that failed has a short row (`dev,name,0,0.0,0.0`): the harness pads rows to the header
  with "0".
- `--accuracy`: `dev,name,batch_size,[tag],accuracy` (pass, pass_due_to_skip, eager_variation,
  fail_accuracy, fail_to_run, eager_fail_to_run, model_fail_to_load, timeout, ...), the same
  counters, and `compilation_latency` (2025 on).
- `<output>_compilation_metrics.csv`: `dev,name,batch_size` and seconds per `dynamo_timed` function
  (`torch._dynamo.utils.compile_times(repr="csv", aggregate=True)`); the names differ by release.
- `<output>.json` beside each CSV: one JSON record a metric (the PyTorch benchmark database's
  format), naming what the CSV leaves to its file name: mode, dtype, backend and suite ("origins").
- `ci_expected_accuracy/<config>_<suite>_<mode>.csv` (PyTorch's repository, what CI's graph-break
  gate compares against): `name,accuracy,graph_breaks,...`, no `dev`.

Which file is which is decided by its header; the suite, mode, dtype, backend and device of a row
come from the JSON sidecar, else from the words of the file name (CI names its files
`<backend>_<suite>_<dtype>_<mode>_<device>_<performance|accuracy>.csv`), else stay NULL (the
run's labels may say them: see the `harness_rows` view).
"""

from __future__ import annotations

import csv
import io
import re

import orjson

from inductor_warehouse.ingest.rows import Parsed, HarnessResultRow

SOURCE = "harness"
FLOAT_COLUMNS = ("speedup", "abs_latency", "compilation_latency", "compression_ratio", "eager_peak_mem",
                 "dynamo_peak_mem", "cache_lookup_latency", "baseline", "speedup_vs_baseline")
INT_COLUMNS = ("batch_size", "calls_captured", "unique_graphs", "graph_breaks", "unique_graph_breaks",
               "autograd_captures", "autograd_compiles", "cudagraph_skips", "fallbacks_to_eager")
TEXT_COLUMNS = {"dev": "device", "name": "model", "tag": "tag", "accuracy": "accuracy"}

_SUITE_WORDS = {"timm_models": "timm_models", "timm": "timm_models", "huggingface": "huggingface",
                "torchbench": "torchbench"}
_MODES = ("training", "inference")
_DTYPES = ("float32", "float16", "bfloat16", "amp")
_DEVICES = ("cpu", "cuda", "xpu", "mps", "hpu", "rocm")
_JSON_HEAD = re.compile(rb'^\s*\{\s*"benchmark"\s*:\s*\{')


def csv_kind(header: list[str]) -> str | None:
    """performance | accuracy | compile_times | expected, from a CSV's header; None for any other CSV."""
    h = [c.strip() for c in header]
    if h[:3] == ["dev", "name", "batch_size"]:
        if "speedup" in h:
            return "performance"
        if "accuracy" in h:
            return "accuracy"
        return "compile_times" if len(h) > 3 else None
    if h[:2] == ["name", "accuracy"]:
        return "expected"
    return None


def harness_csv_kind(head: bytes) -> str | None:
    """The kind of the harness CSV whose first bytes are `head` (csv_kind); None for any other file."""
    line = head.split(b"\n", 1)[0].rstrip(b"\r")
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


def file_words(filename: str) -> dict:
    """suite, mode, dtype, device and backend named by a harness CSV's file name (None where it names
    none): `inductor_timm_models_float32_inference_cpu_performance.csv`, `cpu_inductor_timm_inference.csv`."""
    stem = filename.rsplit("/", 1)[-1]
    stem = stem[:-4] if stem.endswith(".csv") else stem
    stem = stem.removesuffix("_compilation_metrics")
    words = stem.split("_")
    out: dict[str, str | None] = {"suite": None, "mode": None, "dtype": None, "device": None, "backend": None}
    suite_at = None
    for i, w in enumerate(words):
        pair = "_".join(words[i:i + 2])
        if out["suite"] is None and (pair in _SUITE_WORDS or w in _SUITE_WORDS):
            out["suite"] = _SUITE_WORDS.get(pair) or _SUITE_WORDS[w]
            suite_at = i
        elif out["mode"] is None and w in _MODES:
            out["mode"] = w
        elif out["dtype"] is None and w in _DTYPES:
            out["dtype"] = w
        elif out["device"] is None and w in _DEVICES and (suite_at is None or i > suite_at or i == 0):
            out["device"] = w
    if suite_at:
        before = words[:suite_at]
        if before and before[0] in _DEVICES:
            before = before[1:]
        out["backend"] = "_".join(before) or None
    return out


def parse_harness_json(text: str) -> Parsed:
    """Per model, what the records say of it: {"models": {name: {mode, dtype, backend, suite}}}."""
    parsed = Parsed()
    models: dict[str, dict] = {}
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
            "mode": _text(bench.get("mode")), "dtype": _text(bench.get("dtype")),
            "backend": _text(model.get("backend")), "suite": _SUITE_WORDS.get(suite or "", suite or None),
        }
    parsed.facts["models"] = models
    return parsed


def parse_harness_csv(text: str, filename: str, sidecar: dict[str, dict] | None = None) -> Parsed:
    """One harness_results row per CSV row, every column kept (`columns`, as written); `sidecar`: what
    the JSON beside the CSV says per model (`parse_harness_json`)."""
    parsed = Parsed()
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except (StopIteration, csv.Error):
        parsed.problem("no header: not a benchmark harness CSV")
        return parsed
    header = [c.strip() for c in header]
    kind = csv_kind(header)
    if kind is None:
        parsed.problem(f"header {','.join(header)[:120]!r} is none of the harness's CSVs")
        return parsed
    if len(set(header)) != len(header):
        parsed.problem("the header names a column twice; the later one is kept", 1, "warning")
    named = file_words(filename)
    suites = set()
    try:
        for fields in reader:
            lineno = reader.line_num
            if not any(f.strip() for f in fields):
                continue  # PyTorch's expected CSVs put blank lines between rows
            if len(fields) != len(header):
                parsed.problem(f"{len(fields)} fields where the header has {len(header)}", lineno, "warning")
            row = _row(parsed, kind, header, fields, lineno)
            if row is None:
                continue
            meta = (sidecar or {}).get(row["model"]) or {}  # type: ignore[arg-type]
            for key in ("suite", "mode", "dtype", "backend"):
                row[key] = meta.get(key) or named[key]
            if row.get("device") is None:
                row["device"] = named["device"]
            suites.add(row["suite"])
            parsed.add("harness_results", row)
    except csv.Error as e:
        parsed.problem(f"CSV cut or damaged, rows after it are lost: {e}", reader.line_num)
    parsed.facts["kind"] = kind
    if len(suites - {None}) == 1:
        parsed.facts["suite"] = (suites - {None}).pop()
    return parsed


def _row(parsed: Parsed, kind: str, header: list[str], fields: list[str], lineno: int) -> HarnessResultRow | None:
    values = dict(zip(header, (f.strip() for f in fields), strict=False))
    if not values.get("name"):
        parsed.problem("row without a model name", lineno)
        return None
    row: dict = {"kind": kind, "line": lineno, "columns": values}
    for column, key in TEXT_COLUMNS.items():
        row[key] = values.get(column) or None
    for column in INT_COLUMNS:
        row[column] = _number(parsed, values, column, lineno, integer=True)
    for column in FLOAT_COLUMNS:
        row[column] = _number(parsed, values, column, lineno, integer=False)
    return row  # type: ignore[return-value]


def _number(parsed: Parsed, values: dict, column: str, lineno: int, integer: bool):
    text = values.get(column)
    if text is None or text == "":
        return None
    try:
        v = float(text)
    except ValueError:
        parsed.problem(f"{column} {text[:40]!r} is not a number; stored NULL", lineno, "warning")
        return None
    if v != v or v in (float("inf"), float("-inf")):
        return None if integer else v
    if integer:
        if not v.is_integer():
            parsed.problem(f"{column} {text[:40]!r} is not a whole number; stored NULL", lineno, "warning")
            return None
        return int(v)
    return v


def _text(v) -> str | None:
    return v if isinstance(v, str) and v else None
