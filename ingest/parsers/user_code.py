"""Where in the user's code something happened: the innermost frame that is not library code, and
the lineage rows of kernels whose stack traces say it."""

from __future__ import annotations

import re
from collections.abc import Mapping

from inductor_warehouse.ingest.rows import Parsed

_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
LIBRARY_PARTS = ("/site-packages/", "/dist-packages/", "/torch/", "/lib/python")


def innermost_user_frame(text: str) -> tuple[str | None, int | None]:
    """Last `File "...", line N` of a traceback that is not library code (torch, site-packages,
    the standard library); the last frame of any kind when every frame is library code."""
    last: re.Match[str] | None = None
    user: re.Match[str] | None = None
    for m in _FRAME.finditer(text):
        last = m
        path = m.group(1)
        if not any(p in path for p in LIBRARY_PARTS):
            user = m
    m = user or last  # type: ignore[assignment]
    return (m.group(1), int(m.group(2))) if m else (None, None)


def stack_trace_rows(parsed: Parsed, graph_id: str | None, stacks: Mapping[str, object]) -> int:
    """One lineage row per (kernel, distinct innermost user frame) of
    `{"<kernel>:<debug handle>": [stack trace, ...]}`; a kernel without stacks gets one row
    with no frame. Returns the number of rows added."""
    added = 0
    known: dict[str, tuple[str | None, int | None]] = {}  # kernels of one graph share most of their stacks
    for key, traces in stacks.items():
        handle: str | None
        name, _, handle = key.rpartition(":")
        if not name or not handle.isdigit():
            name, handle = key, None
        frames: list[tuple[str | None, int | None]] = []
        for trace in traces if isinstance(traces, list) else ():
            if isinstance(trace, str):
                frame = known.get(trace)
                if frame is None:
                    frame = known[trace] = innermost_user_frame(trace)
            else:
                frame = (None, None)
            if frame[0] is not None and frame not in frames:
                frames.append(frame)
        for user_file, user_line in frames or [(None, None)]:
            parsed.add("lineage", {
                "graph_id": graph_id, "source_node": None, "post_grad_node": None, "kernel_name": name,
                "debug_handle": int(handle) if handle is not None else None,
                "user_file": user_file, "user_line": user_line, "source": "torch_trace",
            })
            added += 1
    return added
