"""AOTInductor's `kernel_information.json` (in the .pt2 package beside the compiled code):
`{"<kernel>:<debug handle>": {"stack_traces": [...], "post_grad_nodes": [...], "pre_grad_nodes":
[...]}}`, plus (2.14) extern_semantic_key, input_shapes, input_dtypes, output_shape, output_dtype.

rows['lineage']: one row per (kernel, distinct innermost user frame), as the trace's kernel stack
traces give (user_code.stack_trace_rows), source 'kernel_information'; their graph_id is
None: the assembler puts them on the run's AOTInductor graph.
"""

from __future__ import annotations

from inductor_warehouse.ingest.parsers.user_code import stack_trace_rows
from inductor_warehouse.ingest.rows import Parsed


def parse_kernel_information(data: bytes) -> Parsed:
    parsed = Parsed()
    doc = parsed.json_object(data, "kernel_information.json")
    if doc is None:
        return parsed
    stacks = {key: info.get("stack_traces") or [] for key, info in doc.items() if isinstance(info, dict)}
    stack_trace_rows(parsed, None, stacks)
    for row in parsed.rows.get("lineage", ()):
        row["source"] = "kernel_information"
    return parsed
