"""How the files of each run-level source become rows of the run (the register's `read` steps,
`ingest/sources.py`), with the joins between sources that need the rows of those before them. The
debug tree's graph folders are read by `ingest/debug_tree.py`, the sidecars by `ingest/joins.py`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import PurePath

from inductor_warehouse.ingest import joins
from inductor_warehouse.ingest.assembly import EMPTY_GRAPH_FOLDER, Assembly, kind_of
from inductor_warehouse.ingest.debug_tree import graph_folder
from inductor_warehouse.ingest.listing import Artifact, Run
from inductor_warehouse.ingest.parsers import harness, manifest, profiler, spyre, torch_logs, torch_trace, triton_cache
from inductor_warehouse.ingest.parsers.cache_settings import note
from inductor_warehouse.ingest.parsers.harness_names import Fields
from inductor_warehouse.ingest.parsers.torch_logs_ranks import lines_of
from inductor_warehouse.ingest.parsers.trace_breaks import RECOMPILE, UNKNOWN_RECOMPILE
from inductor_warehouse.ingest.parsers.trace_events import SOURCE as TRACE_SOURCE
from inductor_warehouse.ingest.parsers.trace_records import release, told_by_trace
from inductor_warehouse.ingest.parsers.torchrun_exits import rank_exits
from inductor_warehouse.ingest.rows import Parsed, Row, graph_row

# the folders above a harness CSV whose names may say its suite, mode, dtype or device (a CI
# artifact's `rocm/`, a team's `nightly/huggingface/`)
HARNESS_FOLDERS = 3



def read_each(parse: Callable[[bytes], Parsed]) -> Callable[[Assembly, list[Artifact]], None]:
    """The step of a source whose files are each parsed alone, from their bytes, into rows of the run."""
    def read(ctx: Assembly, arts: list[Artifact]) -> None:
        for a in arts:
            if (data := ctx.reader.read(a)) is not None:
                ctx.take(parse(data), a)
    return read


def read_manifest(ctx: Assembly, arts: list[Artifact]) -> None:
    for a in arts:
        data = ctx.reader.read(a)
        if data is not None:
            parsed = manifest.parse_manifest(data)
            ctx.manifest = parsed.facts
            ctx.take(parsed, a)


def read_traces(ctx: Assembly, arts: list[Artifact]) -> None:
    """Trace logs, streamed: a long one hands its rows over as it goes (their shared texts kept, the
    rest spilled). Then what they say of the debug tree's graphs."""
    spill = ctx.spill

    def sink(rows: dict[str, list[Row]]) -> None:
        ctx.keep_shared(rows)
        spill(rows)  # type: ignore[misc]  # set whenever the sink is

    empty = {f.order: f.graph_id for e in ctx.of(EMPTY_GRAPH_FOLDER)
             if (f := graph_folder(e.graph or "")) is not None and f.aot_id is not None}
    for a in arts:
        parsed = torch_trace.parse_torch_trace_chunks(ctx.reader.chunks(a), sink=sink if spill else None,
                                                      known_graphs=ctx.debug_graphs, known_codes=ctx.debug_codes,
                                                      empty_folders=empty)
        torch_trace.settle_rank(parsed, a.path.name)
        ctx.take(parsed, a)
        for k, v in parsed.facts.items():
            ctx.trace.setdefault(k, v)
        note(ctx.trace, parsed.facts.get("caches_said"))  # of several logs, one saying off wins
        if (floor := parsed.facts.get("release_floor")) is not None:  # the least: what every trace can tell
            ctx.trace["release_floor"] = min(floor, ctx.trace["release_floor"])
    joins.trace_onto_graphs(ctx.tables["graphs"], ctx.trace)
    joins.pre_grad_texts(ctx.tables, ctx.trace)
    if arts and RECOMPILE not in told_by_trace(version := _trace_release(ctx)):
        # a release before 2.5 writes no record of a recompile: the trace alone cannot count them
        # (views/15_run_rollups_of.sql: recompiles are then TORCH_LOGS' count, or unknown)
        named = f"torch {version[0]}.{version[1]}" if version else "a torch release not known"
        marker = Parsed()
        marker.add("compile_events", {
            "kind": UNKNOWN_RECOMPILE, "source": TRACE_SOURCE,
            "reason": f"a TORCH_TRACE log of {named} writes no record of a recompile (recompile_reasons: 2.5)"})
        ctx.take(marker, arts[0])


def read_profiles(ctx: Assembly, arts: list[Artifact]) -> None:
    for a in arts:
        data = ctx.reader.read(a)
        if data is not None:
            parsed = profiler.parse_profiler(data)
            joins.attribute_to_graphs(parsed.rows.get("timings", []), ctx.tables["graphs"])
            ctx.take(parsed, a)
            if "rank" in parsed.facts and ctx.facts.get("rank", parsed.facts["rank"]) != parsed.facts["rank"]:
                ctx.facts["rank"] = None  # profiles of several ranks in one run: its rank is none of theirs
            for k, v in parsed.facts.items():
                ctx.facts.setdefault(k, v)


def read_torch_logs(ctx: Assembly, arts: list[Artifact]) -> None:
    """stderr's logs. Of the facts a trace log of the run tells too (graph breaks, recompiles), the
    trace's rows stand, compile by compile; a fact the trace's release writes no record of comes
    from these (trace_breaks.told_by_trace). Then its autotune tables joined to the trace's spans."""
    told = told_by_trace(_trace_release(ctx)) if ctx.of(kind_of(torch_trace)) else frozenset()
    for a in arts:
        text = ctx.reader.text(a)
        if text is None:
            continue
        lines = text.splitlines()
        # torchrun's failure summary names every rank and no process's prefix: read it whole
        if "exitcode" in text and (exits := rank_exits(lines)):
            ctx.facts.setdefault("rank_exits", {}).update(exits)
        if a.process is not None:  # a file of several processes: this run's lines
            lines = lines_of(lines, *a.process)
        parsed = torch_logs.parse_torch_logs(lines)
        if told and "compile_events" in parsed.rows:
            parsed.rows["compile_events"] = [e for e in parsed.rows["compile_events"] if e["kind"] not in told]
        ctx.take(parsed, a)
    joins.join_autotune(ctx.tables)


def _trace_release(ctx: Assembly) -> tuple[int, int] | None:
    """The release of the run's trace logs: the one they or the manifest name, else the least release
    that writes every record they hold (read_traces: the least over them); None: no record known."""
    labels = ctx.manifest.get("labels") or {}
    named = labels.get("torch") if isinstance(labels, dict) else None
    return (release(ctx.trace.get("compiler_version")) or release(named if isinstance(named, str) else None)
            or ctx.trace.get("release_floor"))


def read_spyre_folders(ctx: Assembly, arts: list[Artifact]) -> None:
    """torch-spyre's kernel folders: a graph each."""
    folders: dict[str, list[Artifact]] = defaultdict(list)
    for a in arts:
        folders[str(a.path.parent)].append(a)
    for _, files in sorted(folders.items()):
        texts, unread = {}, set()
        for a in files:
            t = ctx.reader.text(a)
            if t is not None:
                texts[a.path.name] = t
            else:
                unread.add(a.path.name)
        graph_id = files[0].path.parent.name
        parsed = spyre.parse_spyre_folder(texts, frozenset(unread))
        ctx.take(parsed, files[0], graph_id)
        kernels = parsed.rows.get("kernels", [])
        ctx.take(Parsed.one("graphs", graph_row(graph_id, "spyre", folder=graph_id, kernel_count=len(kernels),
                                                extern_kernel_count=0)), files[0])
        for k in ("device", "backend"):
            if parsed.facts.get(k):
                ctx.facts.setdefault(k, parsed.facts[k])


def read_harness(ctx: Assembly, arts: list[Artifact]) -> None:
    """The harness's CSVs, each with what the JSON records beside it say of its models, the run's
    labels and the names of the folders it lies in (the nearest HARNESS_FOLDERS)."""
    run, reader = ctx.run, ctx.reader
    labels = {**ctx.cli_labels, **(ctx.manifest.get("labels") or {})}
    sidecars: dict[str, dict[str, Fields]] = {}
    for a in arts:
        if a.path.name.endswith(".json") and (text := reader.text(a)) is not None:
            parsed = harness.parse_harness_json(text)
            ctx.take(parsed, a)
            sidecars[a.path.name[:-len(".json")]] = parsed.facts.get("models") or {}
    suites: set[str] = set()
    for a in arts:
        if not a.path.name.endswith(".csv") or (text := reader.text(a)) is None:
            continue
        parsed = harness.parse_harness_csv(text, a.path.name, sidecars.get(a.path.name[:-len(".csv")]), labels,
                                           tuple(p.name for p in list(a.path.parents)[:HARNESS_FOLDERS]))
        job = _spelled(run, a.path.parent)
        for row in parsed.rows.get("harness_results", ()):
            row["file"], row["job"] = run.rel(a), job
        ctx.take(parsed, a)
        if parsed.facts.get("suite"):
            suites.add(parsed.facts["suite"])
    if len(suites) == 1:
        ctx.facts["harness_suite"] = suites.pop()  # names the run; a folder of several suites keeps its own name


def _spelled(run: Run, folder: PurePath) -> str:
    """A folder of the run's spelled as its source_path is (a path of this machine, or a URL of
    object storage): the harness's rows find the runs of their job under it."""
    top = run.folder
    source = run.source_path.rsplit("/", 1)[0] if run.root_is_log else run.source_path
    try:
        rel = folder.relative_to(top).as_posix()
    except ValueError:
        return str(folder)
    return source if rel == "." else f"{source}/{rel}"


def read_triton_metadata(ctx: Assembly, arts: list[Artifact]) -> None:
    """Triton's cache: each compiled kernel's metadata (its folder names it); then which of a
    kernel's binaries ran."""
    for a in arts:
        if (data := ctx.reader.read(a)) is not None:
            ctx.take(triton_cache.parse_triton_metadata(data, a.path.parent.name), a)
    joins.choose_triton(ctx.tables.get("triton_kernels"))
