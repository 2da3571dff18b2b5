"""One discovered run -> the rows of every table, ready for the loader.

Reads each artifact once (hashing it on the way), hands its content to the parser of its source
kind, tags rows with graph ids, joins the debug tree with the trace log of the same process, and
derives the run row. No database access: `ingest/load.py` writes what this returns.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import time
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from collections.abc import Iterator

from inductor_warehouse.ingest.discover import DEBUG_RUN_RE, GRAPH_FILE_KINDS, Artifact, Run
from inductor_warehouse.ingest.parsers import (
    fusion_ir,
    fx_graph,
    fx_graph_runnable,
    harness,
    kernel_information,
    manifest,
    output_code,
    profiler,
    provenance,
    spyre,
    spyre_provenance,
    torch_logs,
    torch_trace,
    triton_cache,
)
from inductor_warehouse.ingest.rows import Parsed

GRAPH_DIR_RE = re.compile(r"^(?P<model>.+?)__(?P<aot_id>\d+)_(?P<phase>inference|forward|backward)_(?P<nth>\d+)\.(?P<ctr>\d+)$")
# A graph folder that lacks one of these was cut short (the process was killed, a disk filled).
REQUIRED_GRAPH_FILES = ("fx_graph_readable.py", "ir_pre_fusion.txt", "ir_post_fusion.txt", "output_code.py")
CHUNK = 1 << 20


@dataclass
class RunData:
    run: dict
    tables: dict[str, list[dict]]
    errors: list[dict]
    artifacts: list[dict]
    shared: dict[str, dict[str, str]]  # SHARED_TEXTS table -> {hash: text}: kept once however many runs have it
    counters: Counter = field(default_factory=Counter)
    bytes_read: int = 0


def file_hash(path) -> str | None:
    """The content hash the warehouse records for an artifact (of its bytes as stored, .gz included)."""
    hasher = hashlib.blake2b(digest_size=16)
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(CHUNK):
                hasher.update(chunk)
    except OSError:
        return None
    return hasher.hexdigest()


class _Reader:
    """Reads artifacts whole or line by line, hashing every byte read."""

    def __init__(self, run: Run):
        self.run = run
        self.hashes: dict[str, str] = {}
        self.errors: list[dict] = []
        self.bytes_read = 0

    def error(self, art: Artifact, message: str, line: int | None = None, severity: str = "error", kind=None,
              path: str | None = None):
        self.errors.append({"path": path or self.run.rel(art), "kind": kind or art.kind, "line": line,
                            "message": message, "severity": severity})

    def read(self, art: Artifact) -> bytes | None:
        try:
            with open(art.path, "rb") as fh:
                data = fh.read()
        except OSError as e:
            self.error(art, f"cannot read file: {e.strerror or e}")
            return None
        self.bytes_read += len(data)
        self.hashes[self.run.rel(art)] = hashlib.blake2b(data, digest_size=16).hexdigest()
        return data

    def text(self, art: Artifact) -> str | None:
        data = self.read(art)
        if data is None:
            return None
        if b"\x00" in data[:8192]:
            self.error(art, "binary content where a text artifact was expected; file skipped")
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            self.error(art, f"not UTF-8 text ({e.reason} at byte {e.start}); decoded with replacement", severity="warning")
            return data.decode("utf-8", errors="replace")

    def chunks(self, art: Artifact) -> Iterator[bytes]:
        """Stream a (possibly gzipped) log in pieces, hashing the file's bytes as they pass."""
        hasher = hashlib.blake2b(digest_size=16)
        try:
            raw = open(art.path, "rb")
        except OSError as e:
            self.error(art, f"cannot read file: {e.strerror or e}")
            return
        with raw:
            stream = _HashingFile(raw, hasher, self)
            src = gzip.GzipFile(fileobj=stream) if art.path.name.endswith(".gz") else stream
            try:
                while chunk := src.read(CHUNK):
                    yield chunk
            except EOFError as e:
                self.error(art, f"log cut short: {e}", severity="warning")
            except (OSError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
                self.error(art, f"the compressed log is damaged, the rest of it is lost: {e}")
            while stream.read(CHUNK):  # the rest still counts towards the run's identity
                pass
        self.hashes[self.run.rel(art)] = hasher.hexdigest()


class _HashingFile(io.RawIOBase):
    def __init__(self, fh, hasher, reader: _Reader):
        self.fh, self.hasher, self.reader = fh, hasher, reader

    def readable(self):
        return True

    def read(self, n=-1):
        data = self.fh.read(n)
        self.hasher.update(data)
        self.reader.bytes_read += len(data)
        return data

    def readinto(self, b):
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)


def assemble(run: Run, cli_model: str | None = None, cli_labels: dict | None = None, spill=None) -> RunData:
    """`spill({table: rows})`, when given, takes rows of long trace logs before the run is done
    (the loader writes them to disk), so a run's memory does not grow with its log."""
    t0 = time.perf_counter()
    reader = _Reader(run)
    tables: dict[str, list[dict]] = defaultdict(list)
    counters: Counter = Counter()
    facts: dict = {}

    def take(parsed: Parsed, art: Artifact, graph_id: str | None = None, only: set | None = None):
        for table, rows in parsed.rows.items():
            if only is not None and table not in only:
                continue
            if graph_id is not None:
                for r in rows:
                    r.setdefault("graph_id", graph_id)
            tables[table].extend(rows)
        for p in parsed.problems:
            reader.error(art, p.message, p.line, p.severity)
        counters.update(parsed.counters)

    by_kind: dict[str, list[Artifact]] = defaultdict(list)
    for a in run.artifacts:
        by_kind[a.kind].append(a)

    man = Parsed()
    for a in by_kind.get("manifest", []):
        data = reader.read(a)
        if data is not None:
            man = manifest.parse_manifest(data)
            take(man, a)

    debug_graph_ids = _debug_tree(run, by_kind, reader, take, facts)

    trace_facts: dict = {}
    shared: dict[str, dict[str, str]] = {}

    def trace_sink(rows: dict[str, list[dict]]) -> None:
        """Rows a long log hands over before it ends: their shared texts kept, the rest spilled."""
        _pop_shared(rows, shared)
        spill(rows)

    for a in by_kind.get("torch_trace", []):
        parsed = torch_trace.parse_torch_trace_chunks(reader.chunks(a), sink=trace_sink if spill else None,
                                                      known_graphs=frozenset(debug_graph_ids))
        take(parsed, a)
        for k, v in parsed.facts.items():
            trace_facts.setdefault(k, v)
    compile_ids = trace_facts.get("graph_compile_ids") or {}
    cache_states = trace_facts.get("graph_cache_states") or {}
    for g in tables["graphs"]:
        if g.get("compile_id") is None and g["graph_id"] in compile_ids:
            g["compile_id"] = compile_ids[g["graph_id"]]
        if g.get("cache_state") is None and g["graph_id"] in cache_states:
            g["cache_state"] = cache_states[g["graph_id"]]

    for a in by_kind.get("profiler", []):
        data = reader.read(a)
        if data is not None:
            parsed = profiler.parse_profiler(data)
            _attribute_to_graphs(parsed.rows.get("timings", []), tables["graphs"])
            take(parsed, a)
            for k, v in parsed.facts.items():
                facts.setdefault(k, v)

    has_trace = bool(by_kind.get("torch_trace"))
    for a in by_kind.get("torch_logs", []):
        text = reader.text(a)
        if text is None:
            continue
        parsed = torch_logs.parse_torch_logs(text.splitlines())
        # graph breaks and recompiles come from the trace log when there is one: it has them exactly
        take(parsed, a, only=None if not has_trace else set(parsed.rows) - {"compile_events"})

    _join_autotune(tables)
    _spyre(run, by_kind.get("spyre", []), reader, take, facts)
    _sidecars(by_kind, reader, take, tables, facts.get("aoti_graphs", []) + trace_facts.get("aoti_graphs", []),
              counters, facts)
    _harness(run, by_kind.get("harness", []), reader, take, facts)
    for a in by_kind.get("triton_cache", []):
        if (data := reader.read(a)) is not None:
            take(triton_cache.parse_triton_metadata(data, a.path.parent.name), a)
    _choose_triton(tables.get("triton_kernels"))

    for a in by_kind.get("unreadable", []):
        reader.error(a, "not a readable regular file (a broken or looping link, no permission, a FIFO or device)")
    unfinished = _unfinished(man.facts.get("labels") or {}, trace_facts)
    traced = {g["graph_id"] for g in tables["graphs"]}
    # a trace says which finished compiles left no code; without one, nothing says a compile was cut
    codeless = list(trace_facts.get("codeless_compiles") or ()) if has_trace else None
    empty = sorted(by_kind.get("empty_graph_folder", []), key=lambda a: _compile_order(a.graph or ""))
    for a in empty:
        m = GRAPH_DIR_RE.match(a.graph or "")
        graph_id = f"{m.group('aot_id')}_{m.group('phase')}" if m else a.graph
        if cache_states.get(graph_id) == "hit":
            # an FX graph cache hit opens the folder and writes nothing in it; the trace has its code
            counters["empty_graph_folder_of_a_cache_hit"] += 1
        elif graph_id in traced:
            counters["empty_graph_folder_with_code_in_trace"] += 1
        elif unfinished or codeless == []:
            why = unfinished or "the trace has no finished compile without code that it could be"
            reader.error(a, f"graph folder {a.graph} is empty and {why}: the process was killed before "
                            "Inductor wrote it", kind="debug_tree")
        else:
            # a compile that finished and wrote nothing: a graph with nothing to generate (its
            # outputs are its inputs, or views of them)
            counters["empty_graph_folder_of_a_finished_compile"] += 1
            take(_single("graphs", {
                "graph_id": graph_id, "compile_id": codeless.pop(0) if codeless else None,
                "phase": m.group("phase") if m else None,
                "aot_id": int(m.group("aot_id")) if m else None, "folder": a.graph, "pre_fusion_nodes": None,
                "post_fusion_nodes": None, "kernel_count": 0, "extern_kernel_count": 0,
                "compile_order": int(m.group("ctr")) if m else None, "source": "debug_tree",
                "unknown_because": "an empty graph folder of a compile that finished: Inductor generated no code "
                                  "for this graph (0 kernels) and wrote no IR, so its fusion counts are unknown",
            }), a)

    artifacts = []
    for a in run.artifacts:
        if a.kind not in ("unreadable", "empty_graph_folder") and run.rel(a) not in reader.hashes:
            reader.read(a)  # unparsed files still count towards the run's identity
        rel = run.rel(a)
        artifacts.append(
            {"path": rel, "kind": a.kind, "bytes": a.size, "content_hash": reader.hashes.get(rel), "mtime": a.mtime}
        )
    run_row = _run_row(run, man.facts, cli_model, cli_labels, trace_facts, facts, reader, tables)
    run_row["ingest_seconds"] = time.perf_counter() - t0

    _pop_shared(tables, shared)
    return RunData(run_row, dict(tables), reader.errors, artifacts, shared, counters, reader.bytes_read)


def _debug_tree(run: Run, by_kind, reader: _Reader, take, facts: dict) -> set[str]:
    """Parse every graph folder of the debug tree; return the graph ids found."""
    graphs: dict[str, dict[str, Artifact]] = defaultdict(dict)
    for kind in ("fx_graph", "fusion_ir", "output_code", "provenance", "fx_graph_runnable"):
        for a in by_kind.get(kind, []):
            graphs[str(a.path.parent)][a.path.name] = a
    ids = set()
    for _, files in sorted(graphs.items(), key=lambda kv: _compile_order(kv[0])):
        any_art = next(iter(files.values()))
        folder = any_art.path.parent.name
        m = GRAPH_DIR_RE.match(folder)
        code_art = files.get("output_code.py") or files.get("output_code.cpp")
        parse = output_code.parse_aoti_code if code_art is not None and code_art.path.suffix == ".cpp" \
            else output_code.parse_output_code
        code = _parse_file(code_art, reader, parse)
        if code is not None and code.facts.get("aoti"):
            ids.add(torch_trace.AOTI_CODE)
            aoti_graph = True
        else:
            aoti_graph = False
        aot_id = code.facts.get("aot_id") if code else None
        phase = code.facts.get("phase") if code else None
        if aot_id is None and m:
            aot_id, phase = int(m.group("aot_id")), m.group("phase")
        graph_id = f"{aot_id}_{phase}" if aot_id is not None and phase else folder
        ids.add(graph_id)
        if aoti_graph:
            facts.setdefault("aoti_graphs", []).append(graph_id)
        for name in REQUIRED_GRAPH_FILES:
            if name not in files and not (name == "output_code.py" and code_art is not None):
                reader.error(any_art, f"graph folder {folder} has no {name} (process killed mid-compile?)",
                             kind=_kind_of(name), path=str(Path(run.rel(any_art)).parent / name))
        pre = _parse_file(files.get("ir_pre_fusion.txt"), reader, fusion_ir.parse_fusion_ir)
        post = _parse_file(files.get("ir_post_fusion.txt"), reader, fusion_ir.parse_fusion_ir)
        readable = files.get("fx_graph_readable.py") or files.get("fx_graph_transformed.py")
        ops = _parse_file(readable, reader, fx_graph.parse_fx_graph)
        if ops is not None:
            stage = "readable" if readable.path.name == "fx_graph_readable.py" else "transformed"
            for op in ops.rows.get("ops", []):
                op["stage"] = stage
        prov_art = files.get("inductor_provenance_tracking_node_mappings.json")
        prov = _parse_file(prov_art, reader, provenance.parse_provenance)
        runnable = _parse_file(files.get("fx_graph_runnable.py"), reader, fx_graph_runnable.parse_fx_graph_runnable)

        kernels = code.rows.get("kernels", []) if code else []
        generated = sum(1 for k in kernels if k.get("generated"))
        for parsed, art in ((code, code_art), (ops, readable), (prov, prov_art),
                            (runnable, files.get("fx_graph_runnable.py"))):
            if parsed is not None:
                take(parsed, art, graph_id)
        # fusions and layouts describe the graph after fusion; before it only as a fallback
        if post is not None:
            _link_fusions_to_kernels(post.rows.get("fusions", []), code.facts.get("call_buffers", []) if code else [])
            take(post, files["ir_post_fusion.txt"], graph_id)
        elif pre is not None:
            take(pre, files["ir_pre_fusion.txt"], graph_id, only={"layouts"})
        if pre is not None and post is not None:
            take(pre, files["ir_pre_fusion.txt"], graph_id, only=set())
        for src in (code, runnable):
            if src is not None:
                for k in ("device", "backend", "compiler_version", "compiler_commit", "cuda_version", "device_name",
                          "benchmark_model"):
                    if src.facts.get(k) is not None:
                        facts.setdefault(k, src.facts[k])
        graph_row = {
            "graph_id": graph_id,
            "compile_id": None,
            "phase": phase or (m.group("phase") if m else None),
            "aot_id": aot_id,
            "folder": folder,
            "pre_fusion_nodes": pre.facts.get("top_level_nodes") if pre else None,
            "post_fusion_nodes": post.facts.get("top_level_nodes") if post else None,
            "kernel_count": generated if code else None,
            "extern_kernel_count": (len(kernels) - generated) if code else None,
            "compile_order": int(m.group("ctr")) if m else None,
            "source": "debug_tree",
            "output_code_hash": reader.hashes.get(run.rel(code_art)) if code_art is not None else None,
            "partitions": code.facts.get("partitions") if code else None,
            "unknown_because": None if pre and post else
            f"the graph folder has no {'ir_pre_fusion.txt' if not pre else 'ir_post_fusion.txt'} (process killed "
            "mid-compile?): fusion counts unknown",
        }
        take(_single("graphs", graph_row), any_art)
    return ids


def _unfinished(labels: dict, trace: dict) -> str | None:
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


def _compile_order(folder: str) -> tuple:
    m = GRAPH_DIR_RE.match(folder.rsplit("/", 1)[-1])
    return (int(m.group("ctr")) if m else 1 << 30, folder)


def _kind_of(filename: str) -> str:
    return GRAPH_FILE_KINDS.get(filename, "debug_tree")


def _single(table: str, row: dict) -> Parsed:
    p = Parsed()
    p.add(table, row)
    return p


def _parse_file(art: Artifact | None, reader: _Reader, fn) -> Parsed | None:
    if art is None:
        return None
    text = reader.text(art)
    if text is None:
        return None
    return fn(text)


def _link_fusions_to_kernels(fusions: list[dict], call_buffers: list[tuple[str, list[str]]]) -> None:
    """Name the generated kernel each scheduler node became.

    The IR names extern kernels itself. A generated kernel is the first launch in `call()` that
    passes one of the buffers the node writes: producers launch before the consumers that read
    those buffers. Nodes whose buffers no launch names (fused away into a kernel's registers,
    or no-op nodes) keep NULL rather than a guess.
    """
    first_launch: dict[str, str] = {}
    for kernel, buffers in call_buffers:
        for b in buffers:
            first_launch.setdefault(b, kernel)
    for f in fusions:
        # extern nodes (MultiOutput getitems included) and no-op nodes launch no generated kernel
        if f.get("kernel_name") is None and not (f.get("node_class") or "").startswith(("Extern", "Nop")):
            found = [first_launch[b] for b in f.get("buffers") or () if b in first_launch]
            f["kernel_name"] = found[0] if found else None


def _join_autotune(tables: dict[str, list[dict]]) -> None:
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


def _attribute_to_graphs(timings: list[dict], graphs: list[dict]) -> None:
    """Kernel times the profiler tied to a (compile id, phase) belong to the graph of that pair."""
    by_key = {(g.get("compile_id"), g.get("phase")): g["graph_id"] for g in graphs if g.get("compile_id")}
    for t in timings:
        if t.get("graph_id") is None and t.get("compile_id") is not None:
            t["graph_id"] = by_key.get((t["compile_id"], t.get("phase")))


def _pop_shared(tables, shared: dict[str, dict[str, str]]) -> None:
    """Texts that repeat from run to run leave their rows for a table of their own, keyed by a hash:
    kernel source (by its normalised hash, which the parser set) and guard trees (by their md5).
    A 100,000-run warehouse would otherwise hold each guard tree ~1,000 times (40% of its size)."""
    sources = shared.setdefault("kernel_sources", {})
    for k in tables.get("kernels", ()):
        src = k.pop("source", None)
        if src is not None and k.get("source_hash"):
            sources[k["source_hash"]] = src
    trees = shared.setdefault("guard_trees", {})
    for g in tables.get("guards", ()):
        text = g.pop("text", None)
        if text is not None:
            g["tree_hash"] = tree_hash = g.get("tree_hash") or hashlib.md5(text.encode()).hexdigest()
            trees[tree_hash] = text


def _spyre(run: Run, arts: list[Artifact], reader: _Reader, take, facts: dict) -> None:
    folders: dict[str, list[Artifact]] = defaultdict(list)
    for a in arts:
        folders[str(a.path.parent)].append(a)
    for _, files in sorted(folders.items()):
        texts = {}
        for a in files:
            t = reader.text(a)
            if t is not None:
                texts[a.path.name] = t
        graph_id = files[0].path.parent.name
        parsed = spyre.parse_spyre_folder(texts)
        take(parsed, files[0], graph_id)
        kernels = parsed.rows.get("kernels", [])
        take(_single("graphs", {
            "graph_id": graph_id, "folder": graph_id, "kernel_count": len(kernels), "extern_kernel_count": 0,
            "source": "spyre",
        }), files[0])
        for k in ("device", "backend"):
            if parsed.facts.get(k):
                facts.setdefault(k, parsed.facts[k])


def _sidecars(by_kind, reader: _Reader, take, tables, aoti_graphs: list[str], counters: Counter, facts: dict) -> None:
    """JSON a compiler writes beside its code: AOTInductor's kernel_information.json (lineage of the
    run's AOTInductor graph, when it has exactly one) and torch-spyre's spyre_provenance.json
    (whose kernel identities become the cross-run identity of the kernels of the folders it names:
    their signature is prefixed with the identity's event name)."""
    for a in by_kind.get("kernel_information", []):
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
    for a in by_kind.get("spyre_provenance", []):
        data = reader.read(a)
        if data is None:
            continue
        parsed = spyre_provenance.parse_spyre_provenance(data)
        take(parsed, a)
        for k in ("device", "backend"):
            if k in parsed.facts:
                facts.setdefault(k, parsed.facts[k])
        identities = parsed.facts.get("identities") or {}
        for k in tables.get("kernels", ()):
            if k.get("backend") == "spyre" and k.get("graph_id") in identities:
                k["signature"] = f"{identities[k['graph_id']]}:{k.get('signature')}"


def _choose_triton(rows: list[dict] | None) -> None:
    """Which of a kernel's Triton binaries ran: the one whose warps and stages are the config the
    trace or the autotuner's log names for it; the only one, when one was built and the trace says
    one config. Kernels of the same name in several graphs share their facts: the name is the key
    Triton's cache and Inductor's logs have in common."""
    if not rows:
        return
    told: dict[str, set] = defaultdict(set)
    only_one = set()
    for r in rows:
        if r["source"] != "triton_cache" and r.get("chosen") and r.get("num_warps") is not None:
            told[r["kernel_name"]].add((r["num_warps"], r.get("num_stages")))
        if r.get("num_configs") == 1:
            only_one.add(r["kernel_name"])
    binaries: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        if r["source"] == "triton_cache":
            binaries[r["kernel_name"]].append(r)
    for name, built in binaries.items():
        if name in told:
            for r in built:
                r["chosen"] = (r["num_warps"], r["num_stages"]) in told[name]
        elif len(built) == 1 and name in only_one:
            built[0]["chosen"] = True


def _harness(run: Run, arts: list[Artifact], reader: _Reader, take, facts: dict) -> None:
    """The harness's CSVs, each with what the JSON records beside it say of its models."""
    sidecars: dict[str, dict] = {}
    for a in arts:
        if a.path.name.endswith(".json") and (text := reader.text(a)) is not None:
            parsed = harness.parse_harness_json(text)
            take(parsed, a)
            sidecars[a.path.name[:-len(".json")]] = parsed.facts.get("models") or {}
    for a in arts:
        if not a.path.name.endswith(".csv") or (text := reader.text(a)) is None:
            continue
        parsed = harness.parse_harness_csv(text, a.path.name, sidecars.get(a.path.name[:-len(".csv")]))
        job = _spelled(run, a.path.parent)
        for row in parsed.rows.get("harness_results", ()):
            row["file"], row["job"] = run.rel(a), job
        take(parsed, a)
        if parsed.facts.get("suite"):
            facts.setdefault("harness_suite", parsed.facts["suite"])


def _spelled(run: Run, folder: Path) -> str:
    """A folder of the run's spelled as its source_path is (a path of this machine, or a URL of
    object storage): the harness's rows find the runs of their job under it."""
    top = run.folder
    source = run.source_path.rsplit("/", 1)[0] if run.root_is_log else run.source_path
    try:
        rel = folder.relative_to(top).as_posix()
    except ValueError:
        return str(folder)
    return source if rel == "." else f"{source}/{rel}"


def _run_row(run: Run, man: dict, cli_model, cli_labels, trace: dict, facts: dict, reader: _Reader,
             tables: dict[str, list[dict]]) -> dict:
    labels = dict(man.get("labels") or {})
    for k, v in (cli_labels or {}).items():
        labels.setdefault(k, v)
    if run.job and "job" not in labels:
        labels["job"] = run.job
    if "harness" not in labels:
        # the benchmark harness's mode is part of the workload: its accuracy and performance runs
        # of a model differ in batch size and config (views/12_workloads.sql)
        kinds = run.job_harness_kinds | {a.harness_kind for a in run.artifacts if a.harness_kind}
        config = next((c["inductor_config"] for c in tables.get("compilations", ()) if c.get("inductor_config")), None)
        if mode := harness.run_mode(kinds, config):
            labels["harness"] = mode
    # a manifest of several processes (a job: torchrun's ranks, the benchmark harness's process a
    # model) names their job, and each process's `--only` names its model
    own, job_model = (None, man.get("model")) if run.job_root is not None else (man.get("model"), None)
    model = (own or cli_model or trace.get("benchmark_model") or facts.get("benchmark_model") or job_model
             or facts.get("harness_suite") or _default_model(run))
    started = trace.get("started_at") or _debug_started(run) or labels.get("started_at")
    fingerprint = hashlib.blake2b(digest_size=16)
    for rel, h in sorted(reader.hashes.items()):
        fingerprint.update(f"{rel}\0{h}\n".encode())
    rank = trace.get("rank") if trace.get("rank") is not None else run.rank
    return {
        "run_id": fingerprint.hexdigest()[:16],
        "model": model,
        "compiler_version": trace.get("compiler_version") or facts.get("compiler_version") or _str(labels.get("torch")),
        "compiler_commit": trace.get("compiler_commit") or facts.get("compiler_commit") or _str(labels.get("torch_git")),
        "device": _device(run, labels, trace, facts, tables),
        "device_name": _str(labels.get("device_name")) or facts.get("device_name"),
        "backend": trace.get("backend") or facts.get("backend"),
        "rank": rank,
        "job": str(run.job_root) if run.job_root is not None else None,
        "labels": labels,
        "source_path": run.source_path,
        "started_at": started,
        "pid": trace.get("pid") or run.pid,
        "python_version": trace.get("python_version"),
        "triton_version": trace.get("triton_version") or _str(labels.get("triton")),
        "cuda_version": trace.get("cuda_version") or facts.get("cuda_version") or _str(labels.get("cuda")),
        "artifact_bytes": sum(a.size for a in run.artifacts),
    }


DEVICE_WORDS = {"cpu": "cpu", "cuda": "cuda", "gpu": "cuda", "xpu": "xpu", "mps": "mps", "spyre": "spyre"}


def _device(run: Run, labels: dict, trace: dict, facts: dict, tables: dict[str, list[dict]]) -> str | None:
    """What the run ran on, from the most direct word there is: the manifest, the generated code,
    the IR's buffer layouts, the tensors the trace describes, a CPU-only torch build (`+cpu`), then
    the run's folder names (`cpu-torch2.13/`, `gpu-h200/`). A run killed before any kernel was written
    still says it in most of these; NULL only when none does."""
    build = _str(labels.get("torch")) or trace.get("compiler_version") or facts.get("compiler_version") or ""
    found = (_str(labels.get("device")) or trace.get("device") or facts.get("device")
             or next((r["device"] for r in tables.get("layouts", ()) if r.get("device")), None)
             or trace.get("tensor_device")
             or ("cpu" if build.endswith("+cpu") else None)
             or _folder_device(run))
    return found.split(":", 1)[0] if found else None


def _folder_device(run: Run) -> str | None:
    """A device named by the run's folder or its parent (one device word among their parts)."""
    base = run.folder
    words = {DEVICE_WORDS[w] for name in (base.name, base.parent.name)
             for w in re.split(r"[^a-z0-9]+", name.lower()) if w in DEVICE_WORDS}
    return words.pop() if len(words) == 1 else None


def _str(v) -> str | None:
    return None if v is None else str(v)


def _default_model(run: Run) -> str:
    """A name for a run nobody named: the folder the artifacts were written for."""
    root = run.root
    if DEBUG_RUN_RE.match(root.name) and root.parent.name == "torch_compile_debug":
        return root.parent.parent.name
    if run.root_is_log:
        if run.job:
            return run.job
        if root.name.startswith("dedicated_log_torch_trace_"):
            # TORCH_TRACE names logs with a random suffix: the folder says more
            parent = root.parent
            return parent.parent.name if parent.name == "trace" else parent.name
        name = root.name.removesuffix(".gz")
        return name.rsplit(".", 1)[0] if name.endswith((".log", ".txt", ".json", ".csv")) else name
    return root.name


def _debug_started(run: Run) -> str | None:
    for a in run.artifacts:
        for part in a.path.parts:
            m = DEBUG_RUN_RE.match(part)
            if m:
                y, mo, d, h, mi, s, us = (int(m.group(i)) for i in range(1, 8))
                try:
                    return datetime(y, mo, d, h, mi, s, us).isoformat()
                except ValueError:
                    return None
    return None
