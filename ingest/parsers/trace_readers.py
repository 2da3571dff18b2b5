"""Which reader takes each TORCH_TRACE record: one table, keyed as the record table (`ingest/parsers/trace_records.py`) is,
that the parser dispatches by and `docs/trace_records.md` names.

A reader is `reader(state, line, metadata, compile id, payload bytes)`: the record's line number,
its kind's value in the envelope, the envelope's compile id and its payload. Keys are (kind, None)
for a record kind, (kind, name) for the kinds whose metadata names what they hold (trace_records
NAMED_KINDS); FAMILIES read the names of a kind that no exact key takes.
"""

from __future__ import annotations

from functools import partial

from inductor_warehouse.ingest.parsers.trace_caches import CACHE_ARTIFACT, read_cache, read_kernel_info
from inductor_warehouse.ingest.parsers.trace_chromium import read_chromium
from inductor_warehouse.ingest.parsers.trace_events import (
    read_dynamo_error,
    read_dynamo_start,
    read_graph_break,
    read_recompile,
)
from inductor_warehouse.ingest.parsers.trace_graphs import (
    read_aot_graph,
    read_exported_program,
    read_graph_dump,
    read_node_mappings,
    read_output_code,
    read_post_grad_graph,
    read_pre_grad_graph,
    read_stack_traces,
)
from inductor_warehouse.ingest.parsers.trace_guards import read_cpp_guards, read_json_guards
from inductor_warehouse.ingest.parsers.trace_metrics import (
    read_bwd_metrics,
    read_metrics,
    read_runtime_metrics,
    read_torch_version,
)
from inductor_warehouse.ingest.parsers.trace_schedule import (
    read_collective_schedule,
    read_graph_execution,
    read_runtime_estimates,
)
from inductor_warehouse.ingest.parsers.trace_shapes import SHAPE_KINDS, read_describe_tensor, read_shape, read_str

READERS = {  # type: ignore[misc]
    ("str", None): read_str,
    **{(kind, None): partial(read_shape, kind=kind) for kind in SHAPE_KINDS},
    ("describe_tensor", None): read_describe_tensor,
    ("dynamo_start", None): read_dynamo_start,
    ("compilation_metrics", None): read_metrics,
    ("bwd_compilation_metrics", None): read_bwd_metrics,
    ("compilation_metrics_runtime", None): read_runtime_metrics,
    ("bwd_compilation_metrics_runtime", None): read_runtime_metrics,
    ("chromium_event", None): read_chromium,
    ("dynamo_cpp_guards_str", None): read_cpp_guards,
    ("dynamo_guards", None): read_json_guards,
    ("inductor_output_code", None): read_output_code,
    ("exported_program", None): read_exported_program,
    ("inductor_post_grad_graph", None): read_post_grad_graph,
    ("inductor_pre_grad_graph", None): read_pre_grad_graph,  # its kind in 2.7
    ("aot_forward_graph", None): read_aot_graph,
    ("aot_inference_graph", None): read_aot_graph,
    ("artifact", "torch_version"): read_torch_version,
    ("artifact", "dynamo_graph_break_reason"): read_graph_break,
    ("artifact", "recompile_reasons"): read_recompile,
    ("artifact", "dynamo_error"): read_dynamo_error,
    ("artifact", "inductor_post_grad_graph"): read_post_grad_graph,
    ("artifact", "after_post_grad_graph"): read_post_grad_graph,  # its name in 2.8 and 2.9
    ("artifact", "before_pre_grad_graph"): read_pre_grad_graph,
    ("artifact", "inductor_provenance_tracking_kernel_stack_traces"): read_stack_traces,
    ("artifact", "inductor_provenance_tracking_node_mappings"): read_node_mappings,
    ("artifact", "triton_kernel_info"): read_kernel_info,
    ("artifact", "inductor_collective_schedule"): read_collective_schedule,
    ("artifact", "inductor_runtime_and_tensor_meta"): read_runtime_estimates,
    ("artifact", "graph_execution"): read_graph_execution,
}
# kind -> (the pattern of the names read, None for every name; reader)
FAMILIES = {
    "artifact": (CACHE_ARTIFACT, read_cache),
    "graph_dump": (None, read_graph_dump),  # AOTInductor's code; other dumps are only counted
}


def reader_of(kind, name):
    """The reader of a record of `kind` (and `name`, for the named kinds), or None."""
    reader = READERS.get((kind, name))
    if reader is None and kind in FAMILIES:
        pattern, family_reader = FAMILIES[kind]
        if pattern is None or (isinstance(name, str) and pattern.match(name)):
            return family_reader
    return reader
