"""The targets `make bench` checks and the markdown tables its report prints."""

from __future__ import annotations

TARGETS = {
    "ingest_mb_s": 150.0, "trace_x_html": 10.0, "trace_x_plain": 1.25, "small_logs_x_plain": 1.1, "reingest_s": 0.3,
    "query_ms": 200.0, "rss_mb": 1024.0,
    # at 100,000 runs
    "query_ms_100k": 500.0, "page_ms_100k": 1000.0, "compare_ms_100k": 1000.0, "rss_mb_100k": 4096.0,
}


def table(header: list[str], rows: list[list]) -> str:
    cells = [[str(c) for c in header]] + [[fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in cells]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:,.1f}" if abs(v) >= 10 else f"{v:.2f}"
    if isinstance(v, int):
        return f"{v:,}"
    return "" if v is None else str(v)


def ok(good: bool) -> str:
    return "met" if good else "NOT met"
