"""Every TORCH_TRACE record kind and artifact name PyTorch 2.3 to 2.14 writes, and what the
warehouse does with each: parsed into which tables, kept as text, or ignored on purpose (and why).

The names come from a scan of every released wheel's `trace_structured` call sites
(../shared/research/trace_artifacts_by_release.txt: 2.3.1 to 2.14.1) and from `zoo/trace_names.py`
over the local 2.13.0 and 2.14.1 wheels, which also follows the names passed through wrappers
(AOTAutograd's runtime-wrapper dumps) and reads computed names as patterns (`fx_graph_cache_*`).
`tests/test_trace_records.py` holds the two together, and holds the table to the parser's own
(`ingest/parsers/trace_readers.py`): what it calls parsed or kept has a reader there, named in
`docs/trace_records.md`, which is `markdown()` of this table. A record the table does not know is
counted per run (`trace_records`, handling 'unknown') and in the `iwh ingest` summary: the day a
release adds an artifact, it shows.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from fnmatch import translate
from functools import cache, lru_cache

from inductor_warehouse.ingest.parsers.trace_readers import reader_of
from inductor_warehouse.schema.releases import release_parts

# record kinds whose metadata names what they hold: counted by (kind, name)
NAMED_KINDS = frozenset({"artifact", "graph_dump", "link", "dump_file"})
PARSED, KEPT, IGNORED, UNKNOWN = "parsed", "kept", "ignored", "unknown"


@dataclass(frozen=True)
class RecordEntry:
    kind: str  # the envelope's record kind
    name: str  # for NAMED_KINDS: the name, or a pattern (`*` any text); else ""
    # first and last release that write it ("" last: 2.14 still does); `2.13+`: written by 2.13, an
    # earlier release not established (the wheel scan reads direct call sites only)
    first: str
    last: str
    handling: str  # PARSED (rows), KEPT (rows, and the text itself), IGNORED
    what: str  # the tables it feeds, or why it is left alone


def _e(kind: str, name: str, first: str, last: str, handling: str, what: str) -> RecordEntry:
    return RecordEntry(kind, name, first, last, handling, what)


_INTERMEDIATE = "an FX graph between two passes: the warehouse reads the graph Inductor compiles (inductor_post_grad_graph)"
_WRAPPER = "AOTAutograd's generated runtime-wrapper source, not the compiled result"
_COMMS = ("a collective-scheduling pass's internals; a graph's collectives come from its output code and "
          "inductor_collective_schedule")
_DIAG = "a diagnostic of one pass, for the compiler's developers"
_PGO = "profile-guided dynamic-shape state (PGO), not about the compiled code"
_CACHE = "cache_events (cache, outcome, key, time saved)"

TRACE_RECORDS: tuple[RecordEntry, ...] = (
    # -- record kinds -------------------------------------------------------------------------
    _e("str", "", "2.3", "", PARSED, "the log's file-name table: the files of shape_events' user frames"),
    _e("dynamo_start", "", "2.3", "", PARSED,
       "the frame's file (compile_events.origin: model, package, torch or stdlib); a compile with a start and no "
       "compilation_metrics did not finish"),
    _e("dynamo_output_graph", "", "2.3", "", IGNORED, "Dynamo's FX graph before AOTAutograd; ops come from the post-grad graph"),
    _e("dynamo_guards", "", "2.3", "", KEPT, "guards (count) and guard_trees (the JSON list as text)"),
    _e("dynamo_cpp_guards_str", "", "2.4", "", KEPT, "guards (leaf guard count) and guard_trees (the tree as text)"),
    _e("aot_joint_graph", "", "2.3", "", IGNORED, "AOTAutograd's joint graph; the forward and backward compile apart"),
    _e("aot_forward_graph", "", "2.3", "", PARSED, "counted: which compiles handed a graph to Inductor (kernel-less graphs)"),
    _e("aot_inference_graph", "", "2.6", "", PARSED, "counted: which compiles handed a graph to Inductor (kernel-less graphs)"),
    _e("aot_backward_graph", "", "2.3", "", IGNORED, "the backward's graph before Inductor; its code is read"),
    _e("compiled_autograd_graph", "", "2.3", "", IGNORED, "compiled autograd's captured graph; its compiled code is read"),
    _e("inductor_pre_grad_graph", "", "2.7", "2.7", KEPT, "graph_texts (the graph Inductor received: the provenance "
       "viewer's pre-grad panel)"),
    _e("inductor_post_grad_graph", "", "2.3", "", KEPT, "ops (the graph Inductor compiled; an artifact from 2.10), "
       "graph_texts"),
    _e("inductor_output_code", "", "2.3", "", KEPT, "graphs, kernels, collectives, fusions' kernels, the run's model "
                                                     "(the benchmark harness's `--only`); kernel_sources (the code); "
                                                     "graph_texts (the whole code)"),
    _e("optimize_ddp_split_graph", "", "2.3", "", IGNORED,
       "DDPOptimizer's split of a graph at bucket boundaries; each part compiles as a graph"),
    _e("optimize_ddp_split_child", "", "2.3", "", IGNORED, "one part of DDPOptimizer's split; it compiles as a graph of its own"),
    _e("compilation_metrics", "", "2.4", "", KEPT,
       "compilations (every field, the record as JSON), timings, compile_events (restarts; a failure, once, "
       "with fallback; before 2.6, graph breaks from restart_reasons: ingest/parsers/trace_breaks.py), "
       "cudagraph_events"),
    _e("bwd_compilation_metrics", "", "2.4", "", KEPT, "compilations and timings of a lazily compiled backward"),
    _e("aot_autograd_backward_compilation_metrics", "", "2.4", "2.4+", IGNORED,
       "the 2.4 backward metrics, superseded by bwd_compilation_metrics"),
    _e("compilation_metrics_runtime", "", "2.13+", "", PARSED, "cudagraph_events: a cudagraph skipped at run time"),
    _e("bwd_compilation_metrics_runtime", "", "2.13+", "", PARSED, "cudagraph_events: a cudagraph skipped at run time"),
    _e("chromium_event", "", "2.5", "", PARSED, "timings (dynamo_timed spans), shape_events (automatic_dynamic), "
                                                   "autotune_choices (winners), cudagraph_events (CUDAGraphNode.record)"),
    _e("describe_tensor", "", "2.4", "", PARSED, "the run's device, when no code names it"),
    _e("describe_storage", "", "2.4", "", IGNORED, "fake-tensor storage metadata"),
    _e("describe_source", "", "2.4", "", IGNORED, "fake-tensor source names"),
    _e("create_symbol", "", "2.6", "", PARSED, "shape_events (symbol)"),
    _e("create_unbacked_symbol", "", "2.6", "", PARSED, "shape_events (unbacked_symbol)"),
    _e("symbolic_shape_specialization", "", "2.4", "", PARSED, "shape_events (specialization)"),
    _e("guard_added_fast", "", "2.6", "", PARSED, "shape_events (guard)"),
    _e("guard_added", "", "2.6", "", PARSED, "shape_events (guard): an export's guards"),
    _e("propagate_real_tensors", "", "2.4", "", IGNORED, "draft export's real-tensor propagation"),
    _e("propagate_real_tensors_provenance", "", "2.7", "", IGNORED, "draft export's real-tensor propagation"),
    _e("expression_created", "", "2.7", "", IGNORED, "every symbolic expression made (TORCH_DTRACE): debugging volume"),
    _e("guard_on_data_dependent_error", "", "2.7", "", IGNORED, "a draft-export diagnostic"),
    _e("missing_fake_kernel", "", "2.6", "", IGNORED, "a draft-export diagnostic"),
    _e("mismatched_fake_kernel", "", "2.6", "", IGNORED, "a draft-export diagnostic"),
    _e("export", "", "2.7", "", IGNORED, "the marker torch.export writes as it starts (TORCH_DTRACE)"),
    _e("exported_program", "", "2.7", "", PARSED,
       "graphs (an exported program: no Inductor compile, kernel counts NULL) and ops (TORCH_DTRACE)"),
    # -- graph_dump, link, dump_file ------------------------------------------------------------
    _e("graph_dump", "inductor_aot_code", "2.4", "2.6", KEPT,
       "graphs, kernels, collectives (AOTInductor's code); kernel_sources; graph_texts"),
    _e("graph_dump", "inductor_aot_wrapper_code", "2.7", "", KEPT,
       "graphs, kernels, collectives (AOTInductor's wrapper); kernel_sources; graph_texts"),
    _e("graph_dump", "inductor_aot_kernel_code", "2.7", "", KEPT,
       "kernels (AOTInductor's kernel file, read with its wrapper); kernel_sources; graph_texts"),
    _e("graph_dump", "inductor_aot_header_code", "2.9", "", IGNORED, "AOTInductor's C++ header: declarations only"),
    _e("link", "*", "2.4", "", IGNORED, "a URL to a profile in an internal tool (cprofile_manifold_url)"),
    _e("dump_file", "*", "2.5", "", IGNORED, "the source of code Dynamo ran from a string (eval'd frames)"),
    # -- artifacts read -------------------------------------------------------------------------
    _e("artifact", "torch_version", "2.12", "", PARSED, "runs (compiler_version, compiler_commit)"),
    _e("artifact", "fx_graph_runnable", "2.5", "", PARSED,
       "runs (caches_said: its env and Inductor config lines, read up to the graph's code)"),
    _e("artifact", "dynamo_graph_break_reason", "2.6", "", PARSED,
       "compile_events: graph_break (as Dynamo counts), uncounted_break (a data-dependent branch, an "
       "unresumable break); a frame that fell back to eager is its failure's, no row"),
    _e("artifact", "recompile_reasons", "2.5", "", PARSED,
       "compile_events (recompile: one per artifact, its failed guards in details)"),
    _e("artifact", "dynamo_error", "2.6", "", PARSED,
       "compile_events (failure): stored once, as its compile's compilation_metrics says it when they do"),
    _e("artifact", "inductor_post_grad_graph", "2.10", "", KEPT, "ops (the graph Inductor compiled), graph_texts"),
    _e("artifact", "after_post_grad_graph", "2.8", "2.9", KEPT,
       "ops, graph_texts (its name for the post-grad graph in 2.8 and 2.9)"),
    _e("artifact", "inductor_provenance_tracking_node_mappings", "2.7", "", PARSED,
       "lineage (source node -> post-grad node -> kernel)"),
    _e("artifact", "inductor_provenance_tracking_kernel_stack_traces", "2.9", "", PARSED, "lineage (kernel -> user line)"),
    _e("artifact", "triton_kernel_info", "2.8", "", PARSED,
       "cache_events (each kernel's autotune cache outcome), triton_kernels (configs tried, compile time, "
       "the best or only config)"),
    _e("artifact", "fx_graph_cache_*", "2.6", "", PARSED, _CACHE + ": fx_graph_cache_hit, _miss, _bypass"),
    _e("artifact", "fx_graph_cache_hash", "2.4", "2.5", PARSED, _CACHE),
    _e("artifact", "fx_graph_bundled_cache_hit", "2.8", "", PARSED, _CACHE),
    _e("artifact", "aotautograd_cache_*", "2.7", "", PARSED, _CACHE + ": aotautograd_cache_hit, _miss, _bypass"),
    _e("artifact", "aotautograd_cache_hash", "2.5", "2.6", PARSED, _CACHE),
    _e("artifact", "precompile_cache_bypass", "2.9", "", PARSED, _CACHE),
    _e("artifact", "dynamo_cache_bypass", "2.10", "", PARSED, _CACHE),
    _e("artifact", "dynamo_cache_entries", "2.10", "", PARSED, _CACHE),
    _e("artifact", "dynamo_cache_exception", "2.10", "", PARSED, _CACHE),
    _e("artifact", "inductor_collective_schedule", "2.9", "", PARSED,
       "collectives (the order Inductor issues a graph's collectives)"),
    _e("artifact", "inductor_runtime_and_tensor_meta", "2.9", "", PARSED,
       "op_estimates (each op's estimated runtime and outputs; needs log_tlparse)"),
    _e("artifact", "graph_execution", "2.9", "", PARSED, "graph_executions (the order compiled graphs ran in)"),
    # -- artifacts left alone ---------------------------------------------------------------------
    _e("artifact", "before_pre_grad_graph", "2.8", "", KEPT,
       "graph_texts (the graph Inductor received: the provenance viewer's pre-grad panel)"),
    _e("artifact", "after_pre_grad_graph", "2.8", "", IGNORED, _INTERMEDIATE),
    _e("artifact", "before_joint_graph", "2.9", "", IGNORED, _INTERMEDIATE),
    _e("artifact", "after_joint_graph", "2.9", "", IGNORED, _INTERMEDIATE),
    _e("artifact", "before_post_grad_graph", "2.8", "", IGNORED, _INTERMEDIATE),
    _e("artifact", "aot_inference_graph_after_hop_passes", "2.13", "", IGNORED, _INTERMEDIATE),
    _e("artifact", "*_pre_grad", "2.7", "", IGNORED, _INTERMEDIATE + " (one pattern-matcher pass's)"),
    _e("artifact", "*_post_grad", "2.7", "", IGNORED, _INTERMEDIATE + " (one pattern-matcher pass's)"),
    _e("artifact", "before_recompile_pre_grad", "2.7", "2.7", IGNORED, _INTERMEDIATE),
    _e("artifact", "after_recompile_pre_grad", "2.7", "2.7", IGNORED, _INTERMEDIATE),
    _e("artifact", "before_recompile_post_grad", "2.7", "2.7", IGNORED, _INTERMEDIATE),
    _e("artifact", "after_recompile_post_grad", "2.7", "2.7", IGNORED, _INTERMEDIATE),
    _e("artifact", "optimus_*", "2.7", "", IGNORED, _INTERMEDIATE + " (a group-batch fusion rule's)"),
    _e("artifact", "cff_*", "2.13+", "", IGNORED, _INTERMEDIATE + " (a group-batch fusion rule's)"),
    _e("artifact", "before_activation_quantization_fwd_aten_pass", "2.8", "", IGNORED, _INTERMEDIATE),
    _e("artifact", "after_activation_quantization_fwd_aten_pass", "2.8", "", IGNORED, _INTERMEDIATE),
    _e("artifact", "before_activation_quantization_bwd_aten_pass", "2.8", "", IGNORED, _INTERMEDIATE),
    _e("artifact", "after_activation_quantization_bwd_aten_pass", "2.8", "", IGNORED, _INTERMEDIATE),
    _e("artifact", "fusion_regions_before", "2.11", "2.12", IGNORED, _INTERMEDIATE),
    _e("artifact", "fusion_regions_after", "2.11", "2.12", IGNORED, _INTERMEDIATE),
    _e("artifact", "overlap_scheduling_graph_before", "2.11", "", IGNORED, _INTERMEDIATE),
    _e("artifact", "overlap_scheduling_graph_after", "2.11", "", IGNORED, _INTERMEDIATE),
    _e("artifact", "inductor_fx_passes_overlap_bucketing", "2.11", "", IGNORED, _INTERMEDIATE),
    _e("artifact", "*_fused", "2.13+", "", IGNORED, "the memory planner's fused-graph dump (<graph>_fused)"),
    _e("artifact", "aot_forward_graph_fw_metadata", "2.6", "", IGNORED, "AOTAutograd's view and mutation metadata"),
    _e("artifact", "aot_forward_graph_fw_subclass_metadata", "2.6", "", IGNORED, "AOTAutograd's tensor-subclass metadata"),
    _e("artifact", "aot_saved_tensors_hooks_graphs", "2.8", "", IGNORED, "saved-tensor hook graphs"),
    _e("artifact", "torch._functorch.config", "2.7", "", IGNORED, "functorch's config; compilations keep the Inductor config"),
    _e("artifact", "dynamo_side_effects", "2.11", "", IGNORED, "Dynamo's side-effect replay code"),
    _e("artifact", "*_ORIGINAL_BYTECODE", "2.12", "", IGNORED, "Dynamo's bytecode dumps"),
    _e("artifact", "*_MODIFIED_BYTECODE", "2.12", "", IGNORED, "Dynamo's bytecode dumps"),
    _e("artifact", "compiled_autograd_graph_pre_reordering", "2.7", "", IGNORED, "compiled autograd's graph before reordering"),
    _e("artifact", "compiled_autograd_compile_reasons", "2.7", "", IGNORED,
       "why compiled autograd recompiled; Dynamo's recompiles are read"),
    _e("artifact", "runtime_wrapper_orchestration", "2.13+", "", IGNORED, _WRAPPER),
    _e("artifact", "compiled_fn_wrapper", "2.13+", "", IGNORED, _WRAPPER),
    _e("artifact", "compiled_function_forward", "2.13+", "", IGNORED, _WRAPPER),
    _e("artifact", "compiled_function_backward", "2.13+", "", IGNORED, _WRAPPER),
    _e("artifact", "backward_prologue", "2.13+", "", IGNORED, _WRAPPER),
    _e("artifact", "backward_epilogue", "2.13+", "", IGNORED, _WRAPPER),
    _e("artifact", "backward_subclass_unwrap", "2.13+", "", IGNORED, _WRAPPER),
    _e("artifact", "backward_subclass_wrapper", "2.13+", "", IGNORED, _WRAPPER),
    _e("artifact", "subclass_wrapper", "2.13+", "", IGNORED, _WRAPPER),
    _e("artifact", "output_alias_wrapper", "2.13+", "", IGNORED, _WRAPPER),
    _e("artifact", "debug_assert_wrapper", "2.13+", "", IGNORED, _WRAPPER),
    _e("artifact", "dedup_wrapper", "2.13+", "", IGNORED, _WRAPPER),
    _e("artifact", "effect_tokens_wrapper", "2.13+", "", IGNORED, _WRAPPER),
    _e("artifact", "functionalized_rng_wrapper", "2.13+", "", IGNORED, _WRAPPER),
    _e("artifact", "synthetic_base_wrapper", "2.13+", "", IGNORED, _WRAPPER),
    _e("artifact", "mutation_epilogue", "2.13+", "", IGNORED, _WRAPPER),
    _e("artifact", "get_*_code_state", "2.6", "", IGNORED, _PGO),
    _e("artifact", "put_local_code_state", "2.6", "", IGNORED, _PGO),
    _e("artifact", "put_remote_code_state", "2.6", "", IGNORED, _PGO),
    _e("artifact", "put_extra_remote_code_state", "2.13+", "", IGNORED, _PGO),
    _e("artifact", "get_extra_remote_code_state", "2.10", "", IGNORED, _PGO),
    _e("artifact", "add_extra_remote_code_state", "2.9", "2.9", IGNORED, _PGO),
    _e("artifact", "compiler_collective", "2.5", "", IGNORED,
       "Dynamo's cross-rank compile agreement; ranks' compile ids are compared instead"),
    _e("artifact", "guard_collective", "2.8", "2.8", IGNORED, "Dynamo's cross-rank guard agreement"),
    _e("artifact", "aot_joint_graph_sync_decision_cross_ranks", "2.9", "", IGNORED, _COMMS),
    _e("artifact", "reorder_communication_preserving_peak_memory", "2.8", "", IGNORED, _COMMS),
    _e("artifact", "sink_waits_iterative_info", "2.9", "", IGNORED, _COMMS),
    _e("artifact", "scheduler_nodes_before_comm_overlap", "2.9", "", IGNORED, _COMMS),
    _e("artifact", "*_ITERATIVE_RECOMPUTE_ERROR", "2.9", "", IGNORED, _COMMS),
    _e("artifact", "fx_bucketing_passes_all_gather_buckets", "2.9", "", IGNORED, _COMMS),
    _e("artifact", "fx_bucketing_passes_reduce_scatter_buckets", "2.9", "", IGNORED, _COMMS),
    _e("artifact", "fx_collectives_node_runtime_estimation", "2.10", "", IGNORED, _COMMS),
    _e("artifact", "fx_collectives_estimations_after_overlap_bucketing", "2.13+", "", IGNORED, _COMMS),
    _e("artifact", "fx_collectives_analytical_estimation", "2.14", "", IGNORED, _COMMS),
    _e("artifact", "fx_compute_nodes_runtime_estimation", "2.10", "", IGNORED, _COMMS),
    _e("artifact", "pre_decomp_comms", "2.13", "", IGNORED, _COMMS),
    _e("artifact", "post_decomp_comms", "2.13", "", IGNORED, _COMMS),
    _e("artifact", "pre_bucketing_collective_sizes", "2.13", "", IGNORED, _COMMS),
    _e("artifact", "pre_bucketing_collective_sizes_after", "2.13", "", IGNORED, _COMMS),
    _e("artifact", "pre_bucketing_fsdp_collectives", "2.13", "", IGNORED, _COMMS),
    _e("artifact", "pge_profile_vs_analytical", "2.13", "", IGNORED, _COMMS),
    _e("artifact", "inductor_overlap_cyclic_extra_deps", "2.12", "", IGNORED, _COMMS),
    _e("artifact", "inductor_spmd_graph_mismatch", "2.12", "", IGNORED, _DIAG + " (ranks whose graphs differ)"),
    _e("artifact", "eager_compile_backwards_failure", "2.5", "", IGNORED, _DIAG),
    _e("artifact", "make_fx_fail_partial", "2.6", "", IGNORED, _DIAG),
    _e("artifact", "fx_interpreter_error", "2.9", "", IGNORED, _DIAG),
    _e("artifact", "min_cut_information", "2.7", "", IGNORED, _DIAG),
    _e("artifact", "min_cut_failed_edge_list", "2.11", "", IGNORED, _DIAG),
    _e("artifact", "min_cut_failed_fx_graph", "2.11", "", IGNORED, _DIAG),
    _e("artifact", "min_cut_failed_svg", "2.11", "", IGNORED, _DIAG),
    _e("artifact", "aotautograd_cache_pickle_failure", "2.11", "", IGNORED, _DIAG),
    _e("artifact", "invoke_subgraph_backward_duplicate", "2.13", "", IGNORED, _DIAG),
    _e("artifact", "fx_net_acc_splitter_finder_events", "2.9", "", IGNORED, _DIAG),
    _e("artifact", "inductor_autotune_at_compile_time_code", "2.10", "", IGNORED,
       "the script Inductor autotunes with at compile time"),
    _e("artifact", "inductor_triton_kernel_to_post_grad_nodes", "2.7", "2.7", PARSED,
       "lineage (post-grad node -> kernel) where the node mappings logged after it name no kernel"),
    _e("artifact", "inductor_generated_kernel_to_post_grad_nodes", "2.8", "2.8", PARSED,
       "lineage (post-grad node -> kernel) where the node mappings logged after it name no kernel"),
    _e("artifact", "inductor_post_to_pre_grad_nodes", "2.7", "2.8", IGNORED,
       "provenance before node mappings; superseded by them"),
    _e("artifact", "compile_worker_status", "2.14", "", IGNORED, "the compile worker pool's health"),
    _e("artifact", "compile_worker_sidecar_death", "2.14", "", IGNORED, "the compile worker pool's health"),
    _e("artifact", "native_dsl_compile", "2.14", "", IGNORED, "native DSL kernel compiles (torch._native)"),
    _e("artifact", "flex_gemm_*", "2.14", "", IGNORED, "flex GEMM's lowering decisions"),
    _e("artifact", "None", "2.6", "2.6", IGNORED, "a partitioner dump that logged no name (2.6 only)"),
)


@cache
def _index() -> tuple[dict[tuple[str, str], RecordEntry], list[tuple[str, re.Pattern[str], RecordEntry]]]:
    exact = {(e.kind, e.name): e for e in TRACE_RECORDS if "*" not in e.name}
    patterns = [(e.kind, re.compile(translate(e.name)), e) for e in TRACE_RECORDS if "*" in e.name]
    return exact, patterns


@lru_cache(maxsize=4096)
def entry_of(kind: str | None, name: Hashable) -> RecordEntry | None:
    """The record table entry of a record: its kind, and its name for NAMED_KINDS (exact names first)."""
    exact, patterns = _index()
    key = (kind, str(name) if kind in NAMED_KINDS else "")
    if key in exact:
        return exact[key]
    return next((e for k, rx, e in patterns if k == kind and rx.match(key[1])), None)


def handling_of(kind: str | None, name: Hashable) -> str:
    e = entry_of(kind, name)
    return e.handling if e is not None else UNKNOWN


def release(text: str | None) -> tuple[int, int] | None:
    """(major, minor) of a release as `2.5`, `2.4.1+cu121`, `2.13+` write it; None for anything else."""
    parts = release_parts(text)
    return (parts[0], parts[1]) if len(parts) >= 2 else None


def release_floor(records: Iterable[tuple[str | None, Hashable]]) -> tuple[int, int] | None:
    """The least release that writes every (kind, name) of a log the table knows: the log's release
    is that one or later (a record a release first writes is its evidence); None if none is known."""
    firsts = [r for kind, name in records if (e := entry_of(kind, name)) is not None and (r := release(e.first))]
    return max(firsts, default=None)


def first_written(kind: str, name: str = "") -> tuple[int, int]:
    """The first release that writes a record the table holds (a KeyError for one it does not)."""
    found = release(_index()[0][(kind, name)].first)
    assert found is not None, f"{kind} {name}: no first release"
    return found


# compile_events kinds by the fact they tell (trace_breaks.py's UNKNOWN_BREAK and UNKNOWN_UNCOUNTED
# among them), and the trace record a release tells it by: recompiles by a recompile_reasons artifact
# (2.5), graph breaks by compilation_metrics' restart_reasons (2.4; from 2.6 a dynamo_graph_break_reason
# artifact each), or unknown_break rows saying why not; failures by compilation_metrics' fail_type
# (TORCH_LOGS tell those of frames that fell back to eager: torch_logs.py)
FACTS = (
    (frozenset({"recompile"}), ("artifact", "recompile_reasons")),
    (frozenset({"graph_break", "uncounted_break", "unknown_break", "unknown_uncounted", "failure"}),
     ("compilation_metrics", "")),
)


def told_by_trace(version: tuple[int, int] | None) -> frozenset[str]:
    """The compile_events kinds a trace log of release `version` (None: not known) tells, so that where a run
    has one, another source's rows of those kinds (TORCH_LOGS) are left out: the trace's are the
    count, read compile by compile. A trace of an earlier release tells none of them: where it cannot
    tell, the other source's rows stand (views/15_run_rollups_of.sql)."""
    return frozenset().union(*(kinds for kinds, (kind, name) in FACTS
                               if version is not None and version >= first_written(kind, name)))


def read_by(e: RecordEntry) -> str:
    """`module.function` of the parser's reader of an entry's records; "" for those left alone."""
    if e.handling == IGNORED:
        return ""
    # a pattern's members are the names its `*` stands for: one of them finds the family's reader
    found = reader_of(e.kind, e.name.replace("*", "x") if e.kind in NAMED_KINDS else None)
    if found is None:
        return ""
    f = getattr(found[1], "func", found[1])  # a reader bound to one kind of a family is a functools.partial
    return f"{f.__module__.rpartition('.')[2]}.{f.__name__}"


DOC_HEADER = """# TORCH_TRACE records and what the warehouse does with them

Every record kind and artifact name PyTorch 2.3 to 2.14 writes to a `TORCH_TRACE` log, from a scan of
every released wheel's `trace_structured` call sites and of the names passed through wrappers
(`zoo/trace_names.py`), and what the warehouse does with each: **parsed** into tables, **kept**
(parsed, and the text itself stored), or **ignored** on purpose, and why. `from` and `until` are
the first and last releases that write it (`until` empty: 2.14 still does); `2.13+` means written
by 2.13, an earlier first release not established. A name with `*` is a family computed at run
time. `read by` names the function in `ingest/parsers/` that reads its records (the parser's table of
readers is `trace_readers.py`). This page is made from `ingest/parsers/trace_records.py`'s table by `make docs`;
`tests/test_trace_records.py` keeps the two equal.

A record of a kind or name not in this table is counted, never an error: the `iwh ingest` summary
names it ("trace records no release up to 2.14 writes"), `trace_records` holds every run's records
by kind and name with their handling, and `iwh query ingest/unknown_records` lists the unknown ones
across runs, so a new release's new artifacts show up the day it ships. Each unknown record is also
kept whole, a `trace_records` row of its own (`n` 1) with its `line`, `compile_id`, `metadata` (the
envelope's value of its kind, JSON) and `payload` (`md5(payload)` equals its `has_payload`), and so is
any key of an envelope beside its kind that is no context, so its content can be read once the log is gone.
To extend the table for a new release: `python -m zoo.trace_names <its site-packages/torch>` lists the names it can write.

"""


def document() -> str:
    """docs/trace_records.md: what the table means, then the table."""
    return DOC_HEADER + markdown()


def markdown() -> str:
    """The record table as the Markdown table of docs/trace_records.md."""
    out = ["| record kind | name | from | until | handling | what the warehouse does with it | read by |",
           "|---|---|---|---|---|---|---|"]
    for e in TRACE_RECORDS:
        reader = read_by(e)
        out.append(f"| `{e.kind}` | {f'`{e.name}`' if e.name else ''} | {e.first} | {e.last} | {e.handling} | {e.what} "
                   f"| {f'`{reader}`' if reader else ''} |")
    return "\n".join(out) + "\n"
