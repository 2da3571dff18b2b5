"""Where in the user's code something happened: the innermost frame that is not library code, and
the lineage rows of kernels whose stack traces say it."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

from inductor_warehouse.ingest.parsers.compile_causes import in_torch, origin
from inductor_warehouse.ingest.rows import Parsed

_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


@functools.cache  # a log names few files in many frames
def is_library(path: str) -> bool:
    """torch's own code (its nn layers too: the user's line is the one that calls them) or the
    standard library. A model that lives in an installed package (timm, transformers, torchvision)
    is the model's code: skipping it would give every kernel of a benchmark-harness run the
    harness's one `mod(*inputs)` line."""
    return in_torch(path) or origin(path) == "stdlib"


def innermost_user_frame(text: str) -> tuple[str | None, int | None]:
    """Last `File "...", line N` of a traceback that is not library code (`is_library`); the last
    frame of any kind when every frame is library code."""
    last: re.Match[str] | None = None
    user: re.Match[str] | None = None
    for m in _FRAME.finditer(text):
        last = m
        if not is_library(m.group(1)):
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
