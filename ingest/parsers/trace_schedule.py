"""Readers of what Inductor planned and what ran: the collective schedule (collectives), op
runtime estimates (op_estimates) and the order compiled graphs ran in (graph_executions)."""

from __future__ import annotations

from inductor_warehouse.ingest.parsers.compile_ids import normalise_torch_compile_id
from inductor_warehouse.ingest.parsers.trace_log import TraceLog
from inductor_warehouse.ingest.rows import Json


def read_collective_schedule(log: TraceLog, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    """The collectives Inductor scheduled for a compile, in order (2.9+)."""
    value = log.json(data, lineno, "inductor_collective_schedule")
    for seq, op in enumerate(value if isinstance(value, list) else ()):
        log.parsed.add("collectives", {"graph_id": None, "compile_id": cid, "seq": seq, "line": lineno,
                                         "op": None if op is None else str(op), "source": "collective_schedule"})


def read_runtime_estimates(log: TraceLog, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    """Inductor's runtime estimate and output shapes of each scheduled op (2.9+, log_tlparse)."""
    value = log.json(data, lineno, "inductor_runtime_and_tensor_meta")
    ops = value.get("ops") if isinstance(value, dict) else None
    for seq, op in enumerate(ops if isinstance(ops, list) else ()):
        if isinstance(op, dict):
            runtime = op.get("estimated_runtime_ns")
            log.parsed.add("op_estimates", {
                "compile_id": cid, "seq": seq, "name": None if op.get("name") is None else str(op["name"]),
                "op_type": op.get("type") if isinstance(op.get("type"), str) else None,
                "estimated_runtime_ns": float(runtime) if isinstance(runtime, (int, float))
                and not isinstance(runtime, bool) else None,
                "outputs": op.get("outputs"), "line": lineno,
            })


def read_graph_execution(log: TraceLog, lineno: int, meta: Json, cid: str | None, data: bytes) -> None:
    """The order compiled graphs ran in (2.9+, under record_and_log_graph_execution_order)."""
    value = log.json(data, lineno, "graph_execution")
    order = value.get("graph_execution_order") if isinstance(value, dict) else None
    for seq, entry in enumerate(order if isinstance(order, list) else ()):
        run_cid = entry.get("compile_id") if isinstance(entry, dict) else entry
        log.parsed.add("graph_executions", {"seq": seq, "compile_id": normalise_torch_compile_id(str(run_cid))
                                              if run_cid is not None else None})
