"""Which reader takes each TORCH_TRACE record: one table, keyed as the record table (`ingest/parsers/trace_records.py`) is,
that the parser dispatches by and `docs/trace_records.md` names.

A reader is `reader(family, line, metadata, compile id, payload bytes)`: the state of its family of
readers (the log's shared part, TraceLog, or a family's own: Shapes, Compiles, Graphs, Caches,
Spans), handed to it explicitly as tlparse hands its parsers their indexes, the record's line
number, its kind's value in the envelope, the envelope's compile id and its payload. The table
names each reader with the family whose state it takes. Keys are (kind, None)
for a record kind, (kind, name) for the kinds whose metadata names what they hold (trace_records
NAMED_KINDS); FAMILIES read the names of a kind that no exact key takes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable
from functools import partial
from typing import Any, TypeAlias

from inductor_warehouse.ingest.parsers.trace_caches import CACHE_ARTIFACT, Caches, read_cache, read_kernel_info
from inductor_warehouse.ingest.parsers.trace_chromium import Spans, read_chromium
from inductor_warehouse.ingest.parsers.trace_events import (
    Compiles,
    read_dynamo_error,
    read_dynamo_start,
    read_graph_break,
    read_recompile,
)
from inductor_warehouse.ingest.parsers.trace_graphs import (
    Graphs,
    read_aot_graph,
    read_exported_program,
    read_graph_dump,
    read_kernel_nodes,
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
    read_runnable,
    read_runtime_metrics,
    read_torch_version,
)
from inductor_warehouse.ingest.parsers.trace_schedule import (
    read_collective_schedule,
    read_graph_execution,
    read_runtime_estimates,
)
from inductor_warehouse.ingest.parsers.trace_log import TraceLog
from inductor_warehouse.ingest.parsers.trace_shapes import SHAPE_KINDS, Shapes, read_describe_tensor, read_shape, read_str
from inductor_warehouse.ingest.rows import Json

# reader(family, line, metadata, compile id, payload); the family's type is the one the table pairs
# it with (Shapes for read_str, ...), which one alias cannot say: Any
Reader: TypeAlias = Callable[[Any, int, Json, str | None, bytes], None]
# a reader given its family's state (TraceState.bound)
BoundReader: TypeAlias = Callable[[int, Json, str | None, bytes], None]
# (record kind, name): the name is the metadata's (None for the kinds not in trace_records.NAMED_KINDS)
RecordKey: TypeAlias = tuple[str | None, Hashable]

READERS: dict[RecordKey, tuple[type, Reader]] = {
    ("str", None): (Shapes, read_str),
    **{(kind, None): (Shapes, partial(read_shape, kind=kind)) for kind in SHAPE_KINDS},
    ("describe_tensor", None): (Shapes, read_describe_tensor),
    ("dynamo_start", None): (Compiles, read_dynamo_start),
    ("compilation_metrics", None): (Compiles, read_metrics),
    ("bwd_compilation_metrics", None): (Compiles, read_bwd_metrics),
    ("compilation_metrics_runtime", None): (TraceLog, read_runtime_metrics),
    ("bwd_compilation_metrics_runtime", None): (TraceLog, read_runtime_metrics),
    ("chromium_event", None): (Spans, read_chromium),
    ("dynamo_cpp_guards_str", None): (TraceLog, read_cpp_guards),
    ("dynamo_guards", None): (Compiles, read_json_guards),
    ("inductor_output_code", None): (Graphs, read_output_code),
    ("exported_program", None): (Graphs, read_exported_program),
    ("inductor_post_grad_graph", None): (Graphs, read_post_grad_graph),
    ("inductor_pre_grad_graph", None): (Graphs, read_pre_grad_graph),  # its kind in 2.7
    ("aot_forward_graph", None): (Graphs, read_aot_graph),
    ("aot_inference_graph", None): (Graphs, read_aot_graph),
    ("artifact", "torch_version"): (TraceLog, read_torch_version),
    ("artifact", "fx_graph_runnable"): (TraceLog, read_runnable),
    ("artifact", "dynamo_graph_break_reason"): (Compiles, read_graph_break),
    ("artifact", "recompile_reasons"): (Compiles, read_recompile),
    ("artifact", "dynamo_error"): (Compiles, read_dynamo_error),
    ("artifact", "inductor_post_grad_graph"): (Graphs, read_post_grad_graph),
    ("artifact", "after_post_grad_graph"): (Graphs, read_post_grad_graph),  # its name in 2.8 and 2.9
    ("artifact", "before_pre_grad_graph"): (Graphs, read_pre_grad_graph),
    ("artifact", "inductor_provenance_tracking_kernel_stack_traces"): (Graphs, read_stack_traces),
    ("artifact", "inductor_provenance_tracking_node_mappings"): (Graphs, read_node_mappings),
    ("artifact", "inductor_triton_kernel_to_post_grad_nodes"): (Graphs, read_kernel_nodes),
    ("artifact", "inductor_generated_kernel_to_post_grad_nodes"): (Graphs, read_kernel_nodes),  # its 2.8 name
    ("artifact", "triton_kernel_info"): (Caches, read_kernel_info),
    ("artifact", "inductor_collective_schedule"): (TraceLog, read_collective_schedule),
    ("artifact", "inductor_runtime_and_tensor_meta"): (TraceLog, read_runtime_estimates),
    ("artifact", "graph_execution"): (TraceLog, read_graph_execution),
}
# kind -> (the pattern of the names read, None for every name; (family, reader))
FAMILIES: dict[str, tuple[re.Pattern[str] | None, tuple[type, Reader]]] = {
    "artifact": (CACHE_ARTIFACT, (Caches, read_cache)),
    "graph_dump": (None, (Graphs, read_graph_dump)),  # AOTInductor's code; other dumps are only counted
}


def reader_of(kind: str | None, name: Hashable) -> tuple[type, Reader] | None:
    """The reader of a record of `kind` (and `name`, for the named kinds) with the family whose state
    it takes, or None."""
    reader = READERS.get((kind, name))
    if reader is None and kind in FAMILIES:
        pattern, family_reader = FAMILIES[kind]
        if pattern is None or (isinstance(name, str) and pattern.match(name)):
            return family_reader
    return reader
