"""What the benchmark harness of 2022-2023 wrote that later releases do not (read off
`benchmarks/dynamo/common.py` and `runner.py` of that era, and off its nightly CSVs):

- `output_csv(filename, headers, row)` appends a row and writes `headers` first when the file is new.
  The loop that runs each model in an `--only` subprocess writes, for a model whose process failed,
  `output_csv(output_filename, [], [device, name, 0, 0.0])`, whatever the run's mode: four fields,
  batch size 0 and 0.0 printed `0.0000`, under any header (`failed_process_row`). The later harness
  calls the same event `infra_error` (`write_csv("infra_error")`), the value its accuracy row gets here.
- When that model was the file's first, its header is that empty list: the file's first line is blank
  and the rows after it carry no names (`blank_header`). The era's headers only grew by appending:
  `--performance` `dev,name,batch_size,speedup,abs_latency`, then `compilation_latency,
  compression_ratio`, `eager_peak_mem,dynamo_peak_mem` and Dynamo's counters; `--accuracy`
  `dev,name,batch_size,accuracy` and the same counters; Aug 2022's performance rows were
  `dev,name,batch_size,speedup`. A row's field count names its columns, for the counts those give.
- `--coverage` writes `dev,name,batch_size,graphs,graph_calls,captured_ops,total_ops,pct_ops,pct_time`
  (and `start_latency`): Dynamo's capture counts, kind `coverage`.
- runner.py merges the per-backend CSVs into `<suite>_<dtype>_<mode>_<device>.csv` (and `sorted_...`):
  `dev,name,batch_size,<backend>,<backend>...`, a speedup a backend. The rows are the per-backend
  files' again: not read (`is_runner_table`).
"""

from __future__ import annotations

import csv
import io

from inductor_warehouse.ingest.parsers.harness_names import DEVICES, file_fields

# accuracy's value of a model whose process failed: the later harness's word for the same event
FAILED_PROCESS = "infra_error"
# the era's columns in the order it appended them, and the field counts of the headers it wrote
ERA_COLUMNS = {
    "performance": ("dev", "name", "batch_size", "speedup", "abs_latency", "compilation_latency",
                    "compression_ratio", "eager_peak_mem", "dynamo_peak_mem", "calls_captured", "unique_graphs",
                    "graph_breaks", "unique_graph_breaks"),
    "accuracy": ("dev", "name", "batch_size", "accuracy", "calls_captured", "unique_graphs", "graph_breaks",
                 "unique_graph_breaks"),
}
ERA_WIDTHS = {"performance": (4, 5, 7, 9, 13), "accuracy": (4, 8)}
COVERAGE_COLUMNS = {"graphs", "graph_calls", "captured_ops", "total_ops"}


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def failed_process_row(fields: list[str]) -> bool:
    """Whether a row is the loop's record of a model whose process failed: `dev,name,0,0.0000`."""
    return len(fields) == 4 and fields[2].strip() == "0" and _float(fields[3].strip()) == 0.0


def is_runner_table(header: list[str]) -> bool:
    """runner.py's merged table: `dev,name,batch_size` and a column a backend, each named by a backend alone."""
    rest = header[3:]
    return header[:3] == ["dev", "name", "batch_size"] and bool(rest) and all(
        file_fields(c + ".csv")["backend"] == c.lower() for c in rest)


def headerless_kind(rows: list[list[str]], filename: str) -> str | None:
    """performance or accuracy, of a file whose header is blank: its name's word, else its rows'
    fourth field (a speedup is a number, an accuracy a word); None when neither tells."""
    words = set(filename.rsplit("/", 1)[-1].lower().removesuffix(".csv").split("_"))
    for kind in ("performance", "accuracy"):
        if kind in words:
            return kind
    kept = [r for r in rows if len(r) >= 4 and not failed_process_row(r)]
    if not kept:
        return None
    return "performance" if all(_float(r[3].strip()) is not None for r in kept) else "accuracy"


def blank_header(text: str, filename: str) -> tuple[str, list[str]] | str:
    """(kind, header) of a CSV whose first line is blank, from its rows' field count; else why not."""
    rows: list[list[str]] = []
    try:
        rows.extend(r for r in csv.reader(io.StringIO(text)) if any(f.strip() for f in r))
    except csv.Error:
        pass  # the rows before the damage say it; the parse reports the damage
    why = ("its first line is blank (the harness of 2022-2023 wrote an empty header when a file's first "
           "model failed)")
    kind = headerless_kind(rows, filename)
    if kind is None:
        return f"{why}, and neither its name nor its rows say whether it is a performance or accuracy CSV: not stored"
    widths = {len(r) for r in rows if not failed_process_row(r)} or {4}
    width = widths.pop() if len(widths) == 1 else None
    if width not in ERA_WIDTHS[kind]:
        counts = ", ".join(map(str, sorted(widths | ({width} if width else set()))))
        return (f"{why}, and its rows have {counts} fields, which no {kind} header of that harness has: "
                "its columns cannot be named, not stored")
    return kind, list(ERA_COLUMNS[kind][:width])


def sniff_blank_header(head: bytes, filename: str) -> str | None:
    """The kind ('' when unsure) of a file whose blank first line is followed by the harness's rows
    (`<device>,<model>,<batch size>,...`); None for any other file."""
    lines = head.decode("utf-8", errors="replace").splitlines()
    if not lines or lines[0].strip(" ,\t") or len(lines) < 2:
        return None
    rows = list(csv.reader(lines[1:-1] or lines[1:2]))
    first = rows[0] if rows else []
    if len(first) < 4 or first[0].split(":", 1)[0] not in DEVICES or not first[2].strip().isdigit():
        return None
    return headerless_kind(rows, filename) or ""
