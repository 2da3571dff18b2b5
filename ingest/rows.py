"""What a parser returns: rows for warehouse tables, problems met, and run-level facts.

Parsers are pure (file content in, `Parsed` out). Rows carry no run_id; graph-level parsers
carry no graph_id either: the assembler (`ingest/assemble.py`) adds both, and only
`ingest/load.py` touches the database.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

import orjson


@dataclass
class Problem:
    """Something wrong with an input; becomes one `ingest_errors` row."""

    message: str
    line: int | None = None
    severity: str = "error"  # "error" | "warning"


@dataclass
class Parsed:
    rows: defaultdict[str, list[dict]] = field(default_factory=lambda: defaultdict(list))
    problems: list[Problem] = field(default_factory=list)
    # run- or graph-level facts a parser learned (compiler_version, device, aot_id, ...)
    facts: dict = field(default_factory=dict)
    # things worth reporting that are not errors (unknown record kinds, skipped blocks, ...)
    counters: Counter = field(default_factory=Counter)

    def add(self, table: str, row: dict) -> None:
        self.rows[table].append(row)

    def problem(self, message: str, line: int | None = None, severity: str = "error") -> None:
        self.problems.append(Problem(message, line, severity))

    def json_object(self, data: str | bytes, what: str) -> dict | None:
        """`data` as a JSON object, or None with the problem recorded (bad JSON, or not an object)."""
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError as e:
            self.problem(f"{what} is not valid JSON: {e}")
            return None
        if not isinstance(doc, dict):
            self.problem(f"{what} is not a JSON object")
            return None
        return doc
