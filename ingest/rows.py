"""What a parser returns: rows for warehouse tables, problems met, and run-level facts; and the
row type of each table the parsers and the assembler produce.

Parsers are pure (file content in, `Parsed` out). Rows carry no run_id; graph-level parsers
carry no graph_id either: the assembler (`ingest/assemble.py`) adds both, and only the loader
(`ingest/load.py` and its stages) touches the database. Rows stay plain dicts, typed by the
TypedDicts below: a row is built millions of times on the parse's hot path, where a class instance
would cost its construction and a conversion back to a dict for Arrow.
"""

# ruff: noqa: UP013 - the functional form keeps a table's columns in a paragraph, not a page
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypedDict, overload

import orjson

if TYPE_CHECKING:
    from typing_extensions import Required  # typing's from 3.11; quoted below, so never imported at run time


@dataclass
class Problem:
    """Something wrong with an input; becomes one `ingest_errors` row."""

    message: str
    line: int | None = None
    severity: str = "error"  # "error" | "warning"


# A row of any table as the stages after the parser handle it (tagged with its graph, its texts
# taken out, converted for Arrow): column -> value, of the types the table's TypedDict below says.
Row: TypeAlias = dict[str, Any]
# What a parser learned of its run or graph (compiler_version, device, aot_id, ...), by name: each
# fact a value of its own type (a text, a number, a map of graph ids), read by name by the assembler.
Facts: TypeAlias = dict[str, Any]


@dataclass
class Parsed:
    rows: defaultdict[str, list[Row]] = field(default_factory=lambda: defaultdict(list))
    problems: list[Problem] = field(default_factory=list)
    facts: Facts = field(default_factory=dict)
    # things worth reporting that are not errors (unknown record kinds, skipped blocks, ...)
    counters: Counter[str] = field(default_factory=Counter)

    # Each table takes rows of its own type (ROW_TYPES below), checked where a parser adds them; one
    # function at run time, on the parse's hot path.
    if TYPE_CHECKING:
        @overload
        def add(self, table: Literal["runs"], row: RunRow) -> None: ...
        @overload
        def add(self, table: Literal["graphs"], row: GraphRow) -> None: ...
        @overload
        def add(self, table: Literal["ops"], row: OpRow) -> None: ...
        @overload
        def add(self, table: Literal["kernels"], row: KernelRow) -> None: ...
        @overload
        def add(self, table: Literal["fusions"], row: FusionRow) -> None: ...
        @overload
        def add(self, table: Literal["layouts"], row: LayoutRow) -> None: ...
        @overload
        def add(self, table: Literal["lineage"], row: LineageRow) -> None: ...
        @overload
        def add(self, table: Literal["artifacts"], row: ArtifactRow) -> None: ...
        @overload
        def add(self, table: Literal["ingest_errors"], row: IngestErrorRow) -> None: ...
        @overload
        def add(self, table: Literal["compilations"], row: CompilationRow) -> None: ...
        @overload
        def add(self, table: Literal["timings"], row: TimingRow) -> None: ...
        @overload
        def add(self, table: Literal["compile_events"], row: CompileEventRow) -> None: ...
        @overload
        def add(self, table: Literal["fusion_decisions"], row: FusionDecisionRow) -> None: ...
        @overload
        def add(self, table: Literal["guards"], row: GuardRow) -> None: ...
        @overload
        def add(self, table: Literal["cache_events"], row: CacheEventRow) -> None: ...
        @overload
        def add(self, table: Literal["autotune_choices"], row: AutotuneChoiceRow) -> None: ...
        @overload
        def add(self, table: Literal["shape_events"], row: ShapeEventRow) -> None: ...
        @overload
        def add(self, table: Literal["cudagraph_events"], row: CudagraphEventRow) -> None: ...
        @overload
        def add(self, table: Literal["collectives"], row: CollectiveRow) -> None: ...
        @overload
        def add(self, table: Literal["op_estimates"], row: OpEstimateRow) -> None: ...
        @overload
        def add(self, table: Literal["graph_executions"], row: GraphExecutionRow) -> None: ...
        @overload
        def add(self, table: Literal["trace_records"], row: TraceRecordRow) -> None: ...
        @overload
        def add(self, table: Literal["spyre_handles"], row: SpyreHandleRow) -> None: ...
        @overload
        def add(self, table: Literal["spyre_kernel_identities"], row: SpyreKernelIdentityRow) -> None: ...
        @overload
        def add(self, table: Literal["spyre_kernel_occurrences"], row: SpyreKernelOccurrenceRow) -> None: ...
        @overload
        def add(self, table: Literal["spyre_compiles"], row: SpyreCompileRow) -> None: ...
        @overload
        def add(self, table: Literal["harness_results"], row: HarnessResultRow) -> None: ...
        @overload
        def add(self, table: Literal["triton_kernels"], row: TritonKernelRow) -> None: ...
        @overload
        def add(self, table: Literal["graph_texts"], row: GraphTextRow) -> None: ...

    def add(self, table: str, row: Any) -> None:
        self.rows[table].append(row)

    def problem(self, message: str, line: int | None = None, severity: str = "error") -> None:
        self.problems.append(Problem(message, line, severity))

    def json_object(self, data: str | bytes, what: str) -> dict[str, Json] | None:
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

    @classmethod
    def one(cls, table: Literal["graphs"], row: GraphRow) -> Parsed:
        """One row the assembler made itself, to be taken as a parser's are."""
        parsed = cls()
        parsed.add(table, row)
        return parsed


# Every value may be None (a NULL), and every key may be absent (a NULL too). A JSON column takes
# text, or an object the loader serialises.
Str: TypeAlias = str | None
Int: TypeAlias = int | None
Float: TypeAlias = float | None
Bool: TypeAlias = bool | None
Strs: TypeAlias = list[str] | None
Json: TypeAlias = Any

# One type per table, its keys the table's columns, as the loader receives the rows
# (tests/test_row_contract.py holds them to schema/current.sql and to what the parsers emit). Not
# declared: run_id and run_key, which the loader sets (but the run's own id, and an error row's,
# which may have none); the rollups, which the loader computes; and the shared texts, which the
# assembler takes out of kernels and guards rows (ingest/assembly.py `keep_shared`). A run row
# always has its id and where it lies (ingest/run_row.py): the loader keys the run by them.
RunRow = TypedDict("RunRow", {
    "run_id": "Required[str]", "model": Str, "compiler_version": Str, "compiler_commit": Str, "device": Str, "device_name": Str,
    "backend": Str, "rank": Int, "labels": Json, "source_path": "Required[str]", "started_at": Str, "ingested_at": Str,
    "pid": Int, "python_version": Str, "triton_version": Str, "cuda_version": Str, "artifact_bytes": Int,
    "ingest_seconds": Float, "job": Str, "caches_said": Str, "caches_said_by": Str,
}, total=False)
GraphRow = TypedDict("GraphRow", {
    "graph_id": Str, "compile_id": Str, "phase": Str, "aot_id": Int, "folder": Str, "pre_fusion_nodes": Int,
    "post_fusion_nodes": Int, "kernel_count": Int, "extern_kernel_count": Int, "compile_order": Int, "source": Str,
    "output_code_hash": Str, "cache_state": Str, "unknown_because": Str, "partitions": Int,
}, total=False)
OpRow = TypedDict("OpRow", {
    "graph_id": Str, "idx": Int, "name": Str, "op_kind": Str, "target": Str, "dtype": Str, "shape": Str,
    "source_file": Str, "source_line": Int, "source_code": Str, "stage": Str,
}, total=False)
KernelRow = TypedDict("KernelRow", {
    "graph_id": Str, "kernel_name": Str, "generated": Bool, "backend": Str, "category": Str, "aten_ops": Strs,
    "source_nodes": Strs, "num_load": Int, "num_store": Int, "num_reduction": Int, "size_hints": Json,
    "signature": Str, "source_hash": Str, "source": Str, "site": Int, "debug_handle": Int, "line": Int, "details": Json,
    "cache_state": Str,
}, total=False)
FusionRow = TypedDict("FusionRow", {
    "graph_id": Str, "group_name": Str, "node_class": Str, "member_count": Int, "members": Strs, "kernel_name": Str,
    "inner_classes": Strs, "buffers": Strs,
}, total=False)
LayoutRow = TypedDict("LayoutRow", {
    "graph_id": Str, "buffer": Str, "layout_kind": Str, "device": Str, "dtype": Str, "size": Strs, "stride": Strs,
    "offset": Str, "ir_class": Str, "kernel_name": Str, "details": Json,
}, total=False)
LineageRow = TypedDict("LineageRow", {
    "graph_id": Str, "source_node": Str, "post_grad_node": Str, "kernel_name": Str, "debug_handle": Int,
    "user_file": Str, "user_line": Int, "source": Str,
}, total=False)
ArtifactRow = TypedDict("ArtifactRow", {
    "path": Str, "kind": Str, "bytes": Int, "content_hash": Str, "mtime": Float,
}, total=False)
IngestErrorRow = TypedDict("IngestErrorRow", {
    "run_id": Str, "path": Str, "kind": Str, "line": Int, "message": Str, "severity": Str, "ingested_at": Str,
}, total=False)
CompilationRow = TypedDict("CompilationRow", {
    "compile_id": Str, "record_kind": Str, "co_name": Str, "co_filename": Str, "co_firstlineno": Int,
    "frame_key": Str, "is_forward": Bool, "graph_op_count": Int, "graph_node_count": Int, "graph_input_count": Int,
    "guard_count": Int, "shape_env_guard_count": Int, "start_time_us": Int, "duration_us": Int,
    "entire_frame_compile_time_s": Float, "backend_compile_time_s": Float, "inductor_compile_time_s": Float,
    "code_gen_time_s": Float, "dynamo_cumulative_compile_time_us": Int,
    "aot_autograd_cumulative_compile_time_us": Int, "inductor_cumulative_compile_time_us": Int,
    "inductor_code_gen_cumulative_compile_time_us": Int, "triton_compile_time_us": Int,
    "compile_time_autotune_time_us": Int, "fail_type": Str, "fail_reason": Str, "fail_user_frame_filename": Str,
    "fail_user_frame_lineno": Int, "restart_reasons": Strs, "has_guarded_code": Bool, "pytorch_version": Str,
    "record": Str, "inductor_config": Str, "fx_cache_local_hits": Int, "fx_cache_local_misses": Int,
    "fx_cache_remote_hits": Int, "fx_cache_remote_misses": Int, "aot_cache_local_hits": Int,
    "aot_cache_local_misses": Int, "aot_cache_remote_hits": Int, "aot_cache_remote_misses": Int,
}, total=False)
TimingRow = TypedDict("TimingRow", {
    "compile_id": Str, "graph_id": Str, "kind": Str, "name": Str, "duration_us": Float, "calls": Int, "source": Str,
    "phase": Str, "launched_by": Str, "launch_index": Int, "parent": Str,
}, total=False)
CompileEventRow = TypedDict("CompileEventRow", {
    "compile_id": Str, "kind": Str, "reason": Str, "user_file": Str, "user_line": Int, "source": Str,
    "details": Strs, "fallback": Bool, "origin": Str, "cause_id": Str, "cause_title": Str,
}, total=False)
FusionDecisionRow = TypedDict("FusionDecisionRow", {
    "compile_id": Str, "node_a": Str, "node_b": Str, "decision": Str, "reason": Str, "line": Int,
}, total=False)
GuardRow = TypedDict("GuardRow", {
    "compile_id": Str, "guard_count": Int, "tree_hash": Str, "text": Str,
}, total=False)
CacheEventRow = TypedDict("CacheEventRow", {
    "compile_id": Str, "graph_id": Str, "cache": Str, "outcome": Str, "reason": Str, "cache_key": Str,
    "location": Str, "kernel_name": Str, "time_saved_us": Float, "source": Str, "line": Int,
}, total=False)
AutotuneChoiceRow = TypedDict("AutotuneChoiceRow", {
    "compile_id": Str, "seq": Int, "op": Str, "shapes": Str, "strides": Str, "dtypes": Str, "num_choices": Int,
    "rank": Int, "choice": Str, "config": Str, "time_ms": Float, "pct": Float, "winner": Bool, "source": Str,
    "line": Int,
}, total=False)
ShapeEventRow = TypedDict("ShapeEventRow", {
    "compile_id": Str, "kind": Str, "symbol": Str, "source": Str, "value": Str, "expr": Str, "reason": Str,
    "user_file": Str, "user_line": Int, "user_code": Str, "line": Int,
}, total=False)
CudagraphEventRow = TypedDict("CudagraphEventRow", {
    "compile_id": Str, "kind": Str, "reason": Str, "n": Int, "source": Str,
}, total=False)
CollectiveRow = TypedDict("CollectiveRow", {
    "graph_id": Str, "compile_id": Str, "seq": Int, "op": Str, "source": Str, "line": Int,
}, total=False)
OpEstimateRow = TypedDict("OpEstimateRow", {
    "compile_id": Str, "seq": Int, "name": Str, "op_type": Str, "estimated_runtime_ns": Float, "outputs": Json,
    "line": Int,
}, total=False)
GraphExecutionRow = TypedDict("GraphExecutionRow", {
    "seq": Int, "compile_id": Str,
}, total=False)
TraceRecordRow = TypedDict("TraceRecordRow", {
    "record_kind": Str, "name": Str, "n": Int, "handling": Str, "line": Int, "compile_id": Str, "metadata": Json,
    "payload": Str, "has_payload": Str,
}, total=False)
SpyreHandleRow = TypedDict("SpyreHandleRow", {
    "handle_id": Str, "source_file": Str, "source_line": Int, "source_col": Int, "aten_op": Str, "ir_chain": Strs,
    "fused_from": Strs, "transform_history": Json,
}, total=False)
SpyreKernelIdentityRow = TypedDict("SpyreKernelIdentityRow", {
    "identity_key": Str, "event_name_base": Str, "aten_ops": Strs, "handle_ids": Strs, "spec_bindings": Json,
}, total=False)
SpyreKernelOccurrenceRow = TypedDict("SpyreKernelOccurrenceRow", {
    "occurrence_key": Str, "identity_key": Str, "compile_key": Str, "compiler_kernel_name": Str, "aliases": Strs,
}, total=False)
SpyreCompileRow = TypedDict("SpyreCompileRow", {
    "compile_key": Str, "upstream_join": Str, "projection_failed": Bool, "provenance_level": Int,
    "structured_tracing": Bool, "torch_spyre_version": Str, "torch_version": Str, "kernels": Int,
    "uncollected_kernels": Strs,
}, total=False)
HarnessResultRow = TypedDict("HarnessResultRow", {
    "file": Str, "line": Int, "job": Str, "kind": Str, "suite": Str, "mode": Str, "dtype": Str, "backend": Str,
    "device": Str, "model": Str, "batch_size": Int, "tag": Str, "accuracy": Str, "speedup": Float,
    "abs_latency": Float, "compilation_latency": Float, "compression_ratio": Float, "eager_peak_mem": Float,
    "dynamo_peak_mem": Float, "cache_lookup_latency": Float, "baseline": Float, "speedup_vs_baseline": Float,
    "calls_captured": Int, "unique_graphs": Int, "graph_breaks": Int, "unique_graph_breaks": Int,
    "autograd_captures": Int, "autograd_compiles": Int, "cudagraph_skips": Int, "fallbacks_to_eager": Int,
    "columns": Json,
    "workload": Str,  # the loader's, as it writes the row (store/rollups.fill_harness_workloads)
}, total=False)
TritonKernelRow = TypedDict("TritonKernelRow", {
    "compile_id": Str, "kernel_name": Str, "source": Str, "cache_key": Str, "num_warps": Int, "num_stages": Int,
    "num_ctas": Int, "maxnreg": Int, "shared_bytes": Int, "target": Str, "triton_version": Str, "config": Str,
    "chosen": Bool, "autotune_state": Str, "num_configs": Int, "compile_time_us": Float, "n_regs": Int,
    "n_spills": Int, "metadata": Json,
}, total=False)# `text` rides on the row until the assembler moves it to graph_sources and sets text_hash
GraphTextRow = TypedDict("GraphTextRow", {"graph_id": Str, "kind": Str, "text_hash": Str, "source": Str, "text": Str},
                         total=False)
# keys a parser's row carries only until the assembler moves their texts into SHARED_TEXTS tables
# (ingest/assemble.py `_pop_shared`): no column of their own table
RIDING = {"kernels": {"source"}, "guards": {"text"}, "graph_texts": {"text"}}

ROW_TYPES: dict[str, type] = {
    "runs": RunRow, "graphs": GraphRow, "ops": OpRow, "kernels": KernelRow, "fusions": FusionRow,
    "layouts": LayoutRow, "lineage": LineageRow, "artifacts": ArtifactRow, "ingest_errors": IngestErrorRow,
    "compilations": CompilationRow, "timings": TimingRow, "compile_events": CompileEventRow,
    "fusion_decisions": FusionDecisionRow, "guards": GuardRow, "cache_events": CacheEventRow,
    "autotune_choices": AutotuneChoiceRow, "shape_events": ShapeEventRow, "cudagraph_events": CudagraphEventRow,
    "collectives": CollectiveRow, "op_estimates": OpEstimateRow, "graph_executions": GraphExecutionRow,
    "trace_records": TraceRecordRow, "spyre_handles": SpyreHandleRow,
    "spyre_kernel_identities": SpyreKernelIdentityRow, "spyre_kernel_occurrences": SpyreKernelOccurrenceRow,
    "spyre_compiles": SpyreCompileRow, "harness_results": HarnessResultRow, "triton_kernels": TritonKernelRow,
    "graph_texts": GraphTextRow,
}


def error_row(path: str, kind: str, message: str, line: int | None = None, severity: str = "error") -> IngestErrorRow:
    """The one place an ingest_errors row is spelled, whoever met the problem (a parser's reader, the
    loader's conversion, the writer); its run_id and ingested_at are the loader's to set."""
    return {"path": path, "kind": kind, "line": line, "message": message, "severity": severity}


def graph_row(graph_id: str, source: str, **facts: str | int | None) -> GraphRow:
    """A graphs row with every column present, None where `facts` says nothing: the one place a
    graph row is spelled, whichever source found the graph."""
    unknown = facts.keys() - GraphRow.__annotations__.keys()
    if unknown:
        raise TypeError(f"graph_row: no graphs column {sorted(unknown)}")
    return {**_NO_GRAPH_FACTS, "graph_id": graph_id, "source": source, **facts}  # type: ignore[typeddict-item]


_NO_GRAPH_FACTS = dict.fromkeys(GraphRow.__annotations__)
