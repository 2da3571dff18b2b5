"""Cross-source joins: what one source of a run says about the rows of another (the trace log's
compile ids and cache outcomes on the debug tree's graphs, the profiler's times on graphs,
stderr's autotune tables on the trace's spans, sidecar JSON on kernels, Triton's cache on the
logs' kernel configs), and what the trace says of the debug tree's empty graph folders.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping

from inductor_warehouse.ingest.debug_tree import compile_order, graph_folder
from inductor_warehouse.ingest.assembly import Assembly
from inductor_warehouse.ingest.listing import Artifact
from inductor_warehouse.ingest.parsers import kernel_information, spyre, spyre_provenance
from inductor_warehouse.ingest.reading import Reader
from inductor_warehouse.ingest.parsers.manifest import Label
from inductor_warehouse.ingest.rows import Facts, Parsed, Row, graph_row


def trace_onto_graphs(graphs: list[Row], trace: Facts) -> None:
    """Compile ids and cache outcomes the trace log knows of graphs that do not say them."""
    compile_ids = trace.get("graph_compile_ids") or {}
    cache_states = trace.get("graph_cache_states") or {}
    for g in graphs:
        if g.get("compile_id") is None and g["graph_id"] in compile_ids:
            g["compile_id"] = compile_ids[g["graph_id"]]
        if g.get("cache_state") is None and g["graph_id"] in cache_states:
            g["cache_state"] = cache_states[g["graph_id"]]
    # 2.3 logs a backward compiled at the first backward call without a compile id; AOTAutograd
    # made it in the compile of the forward graph of its AOT id (AOT ids restart when Dynamo
    # resets: only an id of one compile)
    forward: defaultdict[int, set[str]] = defaultdict(set)
    for g in graphs:
        if g.get("phase") == "forward" and g.get("aot_id") is not None and g.get("compile_id") is not None:
            forward[g["aot_id"]].add(g["compile_id"])
    for g in graphs:
        ids = forward.get(g["aot_id"], ()) if g.get("phase") == "backward" and g.get("aot_id") is not None else ()
        if g.get("compile_id") is None and len(ids) == 1:
            g["compile_id"] = next(iter(ids))


def pre_grad_texts(tables: dict[str, list[Row]], trace: Facts) -> None:
    """The trace's pre-grad graphs that no graph of the trace took (a debug tree's graphs whose code
    the trace does not repeat: AOTInductor's), given to the graphs of their compile id (none for
    AOTInductor) that have none."""
    texts = trace.get("pre_grad_graphs") or {}
    if not texts:
        return
    have = {t["graph_id"] for t in tables.get("graph_texts", ()) if t.get("kind") == "pre_grad_graph"}
    for g in tables.get("graphs", ()):
        text = texts.get(g.get("compile_id"))
        if text is not None and g["graph_id"] not in have:
            tables["graph_texts"].append({"graph_id": g["graph_id"], "kind": "pre_grad_graph", "text": text,
                                          "source": "torch_trace"})


def empty_graph_folders(arts: list[Artifact], graphs: list[Row], trace: Facts | None, labels: Mapping[str, Label],
                        reader: Reader, take: Callable[[Parsed, Artifact], None], counters: Counter[str]) -> None:
    """What each empty graph folder is, from the trace (`trace`: its facts, None without a trace log):
    a cache hit's, a graph whose code is in the trace, a compile cut short (an error), or a compile
    that finished with nothing to generate (a graphs row of 0 kernels)."""
    unfinished = _unfinished(labels, trace or {})
    traced = {g["graph_id"]: g for g in graphs}
    cache_states = (trace or {}).get("graph_cache_states") or {}
    # a trace says which finished compiles left no code; without one, nothing says a compile was cut
    codeless = list(trace.get("codeless_compiles") or ()) if trace is not None else None
    loaded = set((trace or {}).get("loaded_compiles") or ())
    for a in sorted(arts, key=lambda a: compile_order(a.graph or "")):
        folder = a.graph or ""  # an empty graph folder's artifact is named by its folder
        named = graph_folder(folder)
        graph_id = named.graph_id if named else folder
        if graph_id in traced and traced[graph_id].get("folder") is None:
            traced[graph_id]["folder"] = a.graph  # the graph's own folder, though Inductor wrote nothing in it
        if cache_states.get(graph_id) == "hit":
            # an FX graph cache hit opens the folder and writes nothing in it; the trace has its code
            counters["empty_graph_folder_of_a_cache_hit"] += 1
        elif graph_id in traced:
            counters["empty_graph_folder_with_code_in_trace"] += 1
        elif codeless and codeless[0] in loaded:
            # a finished compile whose graph had ops and left neither code nor files: Inductor loaded
            # it from the FX graph cache, and its release logs no code and no outcome of a hit
            counters["empty_graph_folder_of_a_cache_hit"] += 1
            take(Parsed.one("graphs", graph_row(
                graph_id, "debug_tree", compile_id=codeless.pop(0), phase=named.phase if named else None,
                aot_id=named.aot_id if named else None, folder=a.graph, cache_state="hit",
                compile_order=named.order if named else None,
                unknown_because="an FX graph cache hit of a release that logs no code for it: an empty graph "
                                "folder of a finished compile whose graph had ops, so its kernels are unknown",
            )), a)
        elif unfinished or codeless == []:
            why = unfinished or "the trace has no finished compile without code that it could be"
            reader.error(a, f"graph folder {a.graph} is empty and {why}: the process was killed before "
                            "Inductor wrote it", kind="debug_tree")
        else:
            # a compile that finished and wrote nothing: a graph with nothing to generate (its
            # outputs are its inputs, or views of them)
            counters["empty_graph_folder_of_a_finished_compile"] += 1
            take(Parsed.one("graphs", graph_row(
                graph_id, "debug_tree", compile_id=codeless.pop(0) if codeless else None,
                phase=named.phase if named else None, aot_id=named.aot_id if named else None, folder=a.graph,
                kernel_count=0, extern_kernel_count=0, compile_order=named.order if named else None,
                unknown_because="an empty graph folder of a compile that finished: Inductor generated no code "
                                "for this graph (0 kernels) and wrote no IR, so its fusion counts are unknown",
            )), a)


def _unfinished(labels: Mapping[str, Label], trace: Facts) -> str | None:
    """Why the run's compiles did not all finish, when its files say so: the manifest's exit code or
    time-out, or a compile the trace began (dynamo_start) and never reported (compilation_metrics)."""
    if labels.get("timed_out") is True:
        return "the command timed out"
    code = labels.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        return f"the command exited with {code}"
    if trace.get("unfinished_compiles"):
        return f"the trace never reports the end of compile {trace['unfinished_compiles'][0]}"
    return None


def join_autotune(tables: dict[str, list[Row]]) -> None:
    """The trace names each autotuned op's winner and compile id; stderr's tables list its top
    candidates. Both come in the order the ops were tuned: a table gets the compile id of the trace
    span of the same place (op and shapes agreeing), and the trace's winner row stays only where no
    table was printed."""
    rows = tables.get("autotune_choices")
    if not rows:
        return
    spans = {r["seq"]: r for r in rows if r["source"] == "torch_trace"}
    printed = {r["seq"] for r in rows if r["source"] == "torch_logs"}
    if not spans or not printed:
        return
    for r in rows:
        span = spans.get(r["seq"]) if r["source"] == "torch_logs" else None
        if span is not None and (span["op"], span["shapes"]) == (r["op"], r["shapes"]):
            r["compile_id"] = span["compile_id"]
    tables["autotune_choices"] = [r for r in rows if r["source"] == "torch_logs" or r["seq"] not in printed]


def attribute_to_graphs(timings: list[Row], graphs: list[Row]) -> None:
    """Kernel times the profiler tied to a (compile id, phase) belong to the graph of that pair."""
    by_key = {(g.get("compile_id"), g.get("phase")): g["graph_id"] for g in graphs if g.get("compile_id")}
    for t in timings:
        if t.get("graph_id") is None and t.get("compile_id") is not None:
            t["graph_id"] = by_key.get((t["compile_id"], t.get("phase")))


def read_kernel_information(ctx: Assembly, arts: list[Artifact]) -> None:
    """AOTInductor's kernel_information.json, which it writes beside its code: the lineage of the
    run's AOTInductor graph, when it has exactly one."""
    reader, take, counters = ctx.reader, ctx.take, ctx.counters
    aoti_graphs = ctx.facts.get("aoti_graphs", []) + ctx.trace.get("aoti_graphs", [])
    for a in arts:
        data = reader.read(a)
        if data is None:
            continue
        parsed = kernel_information.parse_kernel_information(data)
        if len(aoti_graphs) == 1:
            for row in parsed.rows.get("lineage", ()):
                row["graph_id"] = aoti_graphs[0]
        else:
            counters["kernel_information_without_one_aoti_graph"] += 1
            parsed.rows.pop("lineage", None)
        take(parsed, a)


def read_spyre_provenance(ctx: Assembly, arts: list[Artifact]) -> None:
    """torch-spyre's spyre_provenance.json, whose kernel identities become the cross-run identity of
    the kernels of the folders it names: their signature is prefixed with the identity's event name.
    Its lineage goes onto the kernel folder of its compiler kernel; a run with kernel folders keeps
    none for a kernel whose folder it lacks (a sidecar alone keeps it on the compiler kernel's name)."""
    reader, take, tables, facts = ctx.reader, ctx.take, ctx.tables, ctx.facts
    folders: defaultdict[str, set[str]] = defaultdict(set)
    for g in tables.get("graphs", ()):
        if g.get("source") == "spyre":
            folders[spyre.compiler_kernel_name(g["graph_id"])].add(g["graph_id"])
    for a in arts:
        data = reader.read(a)
        if data is None:
            continue
        parsed = spyre_provenance.parse_spyre_provenance(data)
        if folders:
            _lineage_onto_folders(parsed, folders, ctx.counters)
        take(parsed, a)
        for k in ("device", "backend"):
            if k in parsed.facts:
                facts.setdefault(k, parsed.facts[k])
        identities = parsed.facts.get("identities") or {}
        for kernel in tables.get("kernels", ()):
            if kernel.get("backend") != "spyre":
                continue
            base = identities.get(spyre.compiler_kernel_name(kernel.get("graph_id") or ""))
            if base is not None:
                kernel["signature"] = f"{base}:{kernel.get('signature')}"


def _lineage_onto_folders(parsed: Parsed, folders: Mapping[str, set[str]], counters: Counter[str]) -> None:
    """The sidecar's lineage, filed by compiler kernel, onto that kernel's one folder."""
    lineage = []
    for row in parsed.rows.get("lineage", ()):
        graphs = folders.get(row["graph_id"], set())
        if len(graphs) == 1:
            lineage.append({**row, "graph_id": next(iter(graphs))})
        else:
            counters["spyre_lineage_without_one_kernel_folder"] += 1
    parsed.rows["lineage"] = lineage


def choose_triton(rows: list[Row] | None) -> None:
    """Which of a kernel's Triton binaries ran: the one whose warps and stages are the config the
    trace or the autotuner's log names for it; the only one, when one was built and the trace says
    one config. Kernels of the same name in several graphs share their facts: the name is the key
    Triton's cache and Inductor's logs have in common."""
    if not rows:
        return
    told: dict[str, set[tuple[int, int | None]]] = defaultdict(set)
    only_one = set()
    for r in rows:
        if r["source"] != "triton_cache" and r.get("chosen") and r.get("num_warps") is not None:
            told[r["kernel_name"]].add((r["num_warps"], r.get("num_stages")))
        if r.get("num_configs") == 1:
            only_one.add(r["kernel_name"])
    binaries: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        if r["source"] == "triton_cache":
            binaries[r["kernel_name"]].append(r)
    for name, built in binaries.items():
        if name in told:
            for r in built:
                r["chosen"] = (r["num_warps"], r["num_stages"]) in told[name]
        elif len(built) == 1 and name in only_one:
            built[0]["chosen"] = True
