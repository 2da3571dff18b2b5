"""torch.profiler Chrome-trace JSON (`profile.json`): GPU kernel times.

What the trace gives to attribute a kernel (checked on the 67 GPU corpus runs, torch 2.11):
- every kernel event (cat "kernel", on a GPU pid) carries `args.correlation`, equal to the
  `args.correlation` of the CPU event that launched it (cat "cuda_runtime" `cudaLaunchKernel*`
  for ATen/cuBLAS, "cuda_driver" `cuLaunchKernel*` for Triton), which carries the CPU tid/ts;
- on that CPU thread, compiled code runs inside cpu_op ranges: `Torch-Compiled Region: <compile
  id>` (Dynamo frame: the compile id as the trace writes it), `CompiledFunction` (AOT forward of a
  training graph), `## Call CompiledFxGraph <hash> ##` (the Inductor graph call; the hash is the
  FX-graph cache key and reads `None` with caches off, so it cannot name the graph);
- backward kernels run on the autograd thread inside `CompiledFunctionBackward`, outside any
  compiled region; a "fwdbwd" flow event pair (same id; 's' at the forward op's tid/ts, 'f' at
  the backward op's) links it to its `CompiledFunction`, whose region gives the compile id.
So compile_id is set for kernels launched inside a compiled region (or a backward linked to one),
None for eager kernels (optimizer, loss, ...). The region's name holds the compile id only since
2.6; earlier it reads `Torch-Compiled Region`, and traces of the oldest releases have no region,
only `CompiledFunction` / `CompiledFunctionBackward`: a kernel launched in any of them is compiled
code all the same, so it keeps its phase (inference / forward / backward) with compile_id None,
forward and backward alike, and eager kernels alone have neither.
Extern calls: the compiled graph's code calls ATen ops (`aten::mm`, cuDNN convolutions, attention)
as cpu_op ranges directly inside the graph call (`## Call CompiledFxGraph ##`, else the region or
`CompiledFunction*`); a kernel launched inside one (at any depth) is that op's: `launched_by` names
it and `launch_index` counts the graph call's earlier calls of the same op (0, 1, ...), which is the
order of the graph's extern call sites of that op. Inductor's own Triton kernels run in a cpu_op of
their own name: theirs stay NULL, so their rows stay one per kernel name. The phase (inference / forward / backward) is known
but the aot_id is not, so graph_id stays None: the assembler can map (compile_id, phase) through
the graphs table. Rows are aggregated per (compile_id, phase, kernel name), so a forward and a
backward kernel of the same name stay apart (cuBLAS gemms run in both); each row carries `phase`.
torch-spyre's kernel events (`spyre_kernel_v1_<summary>_<key>#<step>`, any category) are kernels
too, named without their `#<step>`: the name is the kernel identity's eventNameBase.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import defaultdict

from inductor_warehouse.ingest.rows import Json, Parsed

SOURCE = "profiler"
# torch-spyre's kernel events, whatever their category: `spyre_kernel_v1_<summary>_<identity key>#<step>`
SPYRE_EVENT = "spyre_kernel_v"
_REGION_NAME = "Torch-Compiled Region"  # followed by `: <compile id>` since 2.6
_REGION = _REGION_NAME + ": "
_CUDA_LAUNCHES = frozenset(("cuda_runtime", "cuda_driver"))
# Kineto files an out-of-tree backend's runtime calls (torch-spyre's `aiuLaunchControlBlocks`) under
# privateuse1, and XPU's and MTIA's under their own names: each launches kernels as CUDA's runtime does
_LAUNCH_CATEGORIES = _CUDA_LAUNCHES | {"privateuse1_runtime", "privateuse1_driver", "xpu_runtime", "mtia_runtime"}
# Kineto's `deviceProperties[].type` of a device that is not CUDA's, as the warehouse names the device
_DEVICE_TYPES = {"aiu": "spyre", "spyre": "spyre", "xpu": "xpu"}
_FORWARD, _BACKWARD = "CompiledFunction", "CompiledFunctionBackward"
_GRAPH_CALL = "## Call CompiledFxGraph"

# A CPU event's (tid, ts), as the trace says them (a tid may be a number or a name); a cpu_op's
# (start, end, name); a kernel event's (name, dur, correlation); a row's (compile id, phase,
# kernel name, launched_by, launch_index).
Where = tuple[Json, Json]
Launch = tuple[Json, Json, str]  # a launch's tid, ts and category
Span = tuple[float, float, str]
Kernel = tuple[Json, float, Json]
_Key = tuple[str | None, str | None, Json, str | None, int | None]


def is_profiler_trace(head: bytes) -> bool:
    """A JSON object whose head shows Chrome-trace keys; torch.profiler puts `traceEvents` after
    `deviceProperties`, so a short head may show only those."""
    text = head.lstrip()
    if not text.startswith(b"{"):
        return False
    return b'"traceEvents"' in text or (b'"schemaVersion"' in text and b'"deviceProperties"' in text)


# a trace file's name as tensorboard_trace_handler writes it (`<worker>.<time>.pt.trace.json[.gz]`)
TRACE_NAME = ".pt.trace.json"
_HEAD_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"\s*")


def trace_head(head: bytes) -> tuple[bool | None, dict[str, Json]]:
    """Whether a file's first bytes are a Chrome trace's, by the top-level keys before its
    `traceEvents` array, wherever that starts (Kineto writes its header first; a harness that
    rewrites the trace may put an object of its own, of any size, before it): True at a top-level
    `traceEvents` array, False when the bytes are no JSON object or it closes without one, None when
    they end first (a longer head may tell). With the top-level values read before it (`distributedInfo`)."""
    text = head.decode("utf-8", "replace")
    seen: dict[str, Json] = {}
    i = _SPACE.match(text).end()  # type: ignore[union-attr]
    if not text.startswith("{", i):
        return False, seen
    i += 1
    while True:
        i = _SPACE.match(text, i).end()  # type: ignore[union-attr]
        if i >= len(text):
            return None, seen
        if text[i] == ",":
            i += 1
            continue
        if text[i] != '"':
            return False, seen  # closed without one, or no key where one must be
        try:
            key, i = _HEAD_DECODER.raw_decode(text, i)
            i = _SPACE.match(text, i).end()  # type: ignore[union-attr]
            if not text.startswith(":", i):
                return (None if i >= len(text) else False), seen
            i = _SPACE.match(text, i + 1).end()  # type: ignore[union-attr]
            if i >= len(text):
                return None, seen
            if key == "traceEvents":
                return text[i] == "[", seen
            value, i = _HEAD_DECODER.raw_decode(text, i)
        except json.JSONDecodeError:
            return None, seen  # cut inside a value (or bad JSON: a longer head says the same)
        seen[key] = value


def distributed(info: Json) -> dict[str, Json]:
    """The rank, world size and communication backend a trace's `distributedInfo` names (Kineto
    writes it when torch.distributed is initialised), those it names."""
    if not isinstance(info, dict):
        return {}
    out: dict[str, Json] = {k: info[k] for k in ("rank", "world_size") if type(info.get(k)) is int and info[k] >= 0}
    if isinstance(info.get("backend"), str) and info["backend"]:
        out["dist_backend"] = info["backend"]
    return out


def parse_profiler(data: bytes) -> Parsed:
    parsed = Parsed()
    trace = parsed.json_object(data, "profiler trace")
    if trace is None:
        return parsed
    events = trace.get("traceEvents")
    if not isinstance(events, list):
        parsed.problem("no traceEvents list")
        return parsed
    _device_facts(trace, parsed)
    parsed.facts.update(distributed(trace.get("distributedInfo")))

    kernels, launches, ranges, flows, ops = _collect(events, parsed)
    # a trace without deviceProperties (HTA's trimmed ones) still shows its kernels launched by the
    # CUDA runtime or driver API (ROCm's HIP calls too: Kineto files them as cuda_runtime)
    if "device" not in parsed.facts and any((launches.get(c) or (0, 0, ""))[2] in _CUDA_LAUNCHES
                                            for _, _, c in kernels if c is not None):
        parsed.facts["device"] = "cuda"
    scopes = _Scopes(ranges, flows)
    callers = _Callers(ops)
    totals: dict[_Key, list[float]] = defaultdict(lambda: [0, 0.0])  # [calls, duration]
    for name, dur, correlation in kernels:
        launch = launches.get(correlation)
        if launch is None:
            parsed.counters["profiler.kernel_without_launch"] += 1
            key: _Key = (None, None, name, None, None)
        else:
            compile_id, phase = scopes.attribute(*launch[:2])
            op, index = callers.of(*launch[:2]) if compile_id is not None else (None, None)
            if op == name:  # a Triton kernel's own range
                op = index = None
            key = (compile_id, phase, name, op, index)
        total = totals[key]
        total[0] += 1
        total[1] += dur
    for (compile_id, phase, name, op, index), (calls, duration) in totals.items():
        parsed.add(
            "timings",
            {
                "compile_id": compile_id,
                "graph_id": None,
                "kind": "kernel",
                "name": name,
                "duration_us": duration,
                "calls": int(calls),
                "source": SOURCE,
                "phase": phase,
                "launched_by": op,
                "launch_index": index,
            },
        )
    if not kernels:
        parsed.counters["profiler.no_kernel_events"] += 1
    return parsed


def _device_facts(trace: dict[str, Json], parsed: Parsed) -> None:
    devices = trace.get("deviceProperties")
    if isinstance(devices, list) and devices and isinstance(devices[0], dict) and devices[0].get("name"):
        parsed.facts["device_name"] = devices[0]["name"]
    # Kineto describes a CUDA (or ROCm, which torch also calls cuda) device by its compute capability
    if isinstance(devices, list) and any(isinstance(d, dict) and "computeMajor" in d for d in devices):
        parsed.facts["device"] = "cuda"
    elif isinstance(devices, list):
        named = [_DEVICE_TYPES.get(str(d.get("type", "")).lower()) for d in devices if isinstance(d, dict)]
        if named and named[0]:
            parsed.facts["device"] = named[0]


def _collect(events: list[Json], parsed: Parsed) -> tuple[list[Kernel], dict[Json, Launch], dict[Json, list[Span]],
                                                        dict[Json, dict[str, Where]], dict[Json, list[Span]]]:
    """One pass: kernels (name, dur, correlation), launches {correlation: (tid, ts, category)}, the
    compiled-code ranges per CPU thread, fwdbwd flow ends, and every cpu_op range per thread."""
    kernels: list[Kernel] = []
    launches: dict[Json, Launch] = {}
    ranges: dict[Json, list[Span]] = defaultdict(list)  # tid -> [(ts, end, name)]
    ops: dict[Json, list[Span]] = defaultdict(list)  # tid -> [(ts, end, name)], every cpu_op
    flows: dict[Json, dict[str, Where]] = defaultdict(dict)  # flow id -> {'s' | 'f': (tid, ts)}
    for index, ev in enumerate(events):
        if not isinstance(ev, dict):
            parsed.problem(f"traceEvents[{index}] is not an object", severity="warning")
            continue
        cat = ev.get("cat")
        if cat == "kernel" or str(ev.get("name", "")).startswith(SPYRE_EVENT):
            args = ev.get("args") or {}
            dur = ev.get("dur")
            if not isinstance(dur, (int, float)) or "name" not in ev:
                parsed.problem(f"kernel event traceEvents[{index}] has no name or dur", severity="warning")
                continue
            name = ev["name"]
            if isinstance(name, str) and name.startswith(SPYRE_EVENT):
                name = name.partition("#")[0]  # the identity's event name; the runtime appends #<step>
            kernels.append((name, float(dur), args.get("correlation")))
        elif cat in _LAUNCH_CATEGORIES:
            correlation = (ev.get("args") or {}).get("correlation")
            if correlation is not None:
                launches[correlation] = (ev.get("tid"), ev.get("ts"), cat)
        elif cat == "cpu_op":
            name = ev.get("name", "")
            ts, dur = ev.get("ts"), ev.get("dur")
            if isinstance(ts, (int, float)) and isinstance(dur, (int, float)) and isinstance(name, str):
                ops[ev.get("tid")].append((ts, ts + dur, name))
                if name.startswith(_REGION_NAME) or name == _FORWARD or name == _BACKWARD:
                    ranges[ev.get("tid")].append((ts, ts + dur, name))
        elif cat == "fwdbwd" and ev.get("ph") in ("s", "f"):
            flows[ev.get("id")][ev["ph"]] = (ev.get("tid"), ev.get("ts"))
    return kernels, launches, ranges, flows, ops


class _Callers:
    """Answers: which op did the compiled graph call around a CPU (tid, ts), and which of the graph
    call's calls of that op is it? (op name, index), or (None, None) outside any op of a graph call."""

    def __init__(self, ops: dict[Json, list[Span]]) -> None:
        # per thread: the direct children of each graph call, as (start, end, name, index)
        self.children: dict[Json, list[tuple[float, float, str, int]]] = {}
        self.starts: dict[Json, list[float]] = {}
        for tid, spans in ops.items():
            spans.sort(key=lambda s: (s[0], -s[1]))
            kids: list[tuple[float, float, str, int]] = []
            stack: list[tuple[float, bool, dict[str, int]]] = []  # open ranges (end, is a graph call, counts by name)
            for start, end, name in spans:
                while stack and stack[-1][0] < start:
                    stack.pop()
                parent = stack[-1] if stack else None
                if parent is not None and parent[1]:
                    counts = parent[2]
                    kids.append((start, end, name, counts.get(name, 0)))
                    counts[name] = counts.get(name, 0) + 1
                stack.append((end, _is_graph_call(name), {}))
            if kids:
                self.children[tid] = kids
                self.starts[tid] = [k[0] for k in kids]

    def of(self, tid: Json, ts: Json) -> tuple[str | None, int | None]:
        kids = self.children.get(tid)
        if not kids or not isinstance(ts, (int, float)):
            return None, None
        i = bisect.bisect_right(self.starts[tid], ts) - 1
        if i >= 0 and kids[i][1] >= ts and not _is_graph_call(kids[i][2]):
            return kids[i][2], kids[i][3]
        return None, None


def _is_graph_call(name: str) -> bool:
    """The range the compiled graph's code runs in: Inductor's graph call where the release names one
    (2.6+), else the compiled region or AOT function around it."""
    return name.startswith(_GRAPH_CALL) or name.startswith(_REGION_NAME) or name in (_FORWARD, _BACKWARD)


class _Scopes:
    """Answers: which compiled region and phase enclose a CPU (tid, ts)?"""

    def __init__(self, ranges: dict[Json, list[Span]], flows: dict[Json, dict[str, Where]]) -> None:
        self.ranges = {tid: sorted(spans) for tid, spans in ranges.items()}
        self.starts = {tid: [span[0] for span in spans] for tid, spans in self.ranges.items()}
        # backward op (tid, ts) -> forward op (tid, ts)
        self.forward_of = {ends["f"]: ends["s"] for ends in flows.values() if "s" in ends and "f" in ends}

    def _enclosing(self, tid: Json, ts: Json) -> list[Span]:
        spans = self.ranges.get(tid)
        if not spans or not isinstance(ts, (int, float)):
            return []
        # ranges are few (a handful per step): scanning those that start before ts is cheap
        upto = bisect.bisect_right(self.starts[tid], ts)
        return [span for span in spans[:upto] if span[1] >= ts]

    def _region(self, tid: Json, ts: Json) -> str | None:
        compile_id = None
        for _start, _end, name in self._enclosing(tid, ts):
            if name.startswith(_REGION):
                compile_id = name[len(_REGION):]  # sorted by start: the innermost wins
        return compile_id

    def attribute(self, tid: Json, ts: Json) -> tuple[str | None, str | None]:
        """(compile_id, phase) of a launch at (tid, ts)."""
        enclosing = self._enclosing(tid, ts)
        names = {name for _s, _e, name in enclosing}
        if _BACKWARD in names:
            start = max(s for s, _e, name in enclosing if name == _BACKWARD)
            forward = self.forward_of.get((tid, start))
            return (self._region(*forward) if forward else None), "backward"
        if _FORWARD in names:
            return self._region(tid, ts), "forward"
        if any(name.startswith(_REGION_NAME) for name in names):
            return self._region(tid, ts), "inference"
        return None, None  # eager
