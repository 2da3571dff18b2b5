"""The run row: a run's identity and what it ran, from every source that says it."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from datetime import datetime

from inductor_warehouse.ingest.discover import DEBUG_RUN_RE
from inductor_warehouse.ingest.listing import Run
from inductor_warehouse.ingest.parsers import cache_settings, harness
from inductor_warehouse.ingest.parsers.manifest import Label, run_name, start_time
from inductor_warehouse.ingest.rows import Facts, Row, RunRow


def run_row(run: Run, man: Facts, cli_model: str | None, cli_labels: Mapping[str, Label] | None,
            trace: Facts, facts: Facts, hashes: dict[str, str], tables: dict[str, list[Row]]) -> RunRow:
    """The run's row: who named its model, what it ran on, with which compiler, from the most
    direct source that says it (the manifest, the command line, the trace log, the other files, the
    folder); its id is the hash of every file's path inside the run's folder and content hash."""
    labels: dict[str, Label] = dict(man.get("labels") or {})
    for k, v in (cli_labels or {}).items():
        labels.setdefault(k, v)
    if run.job and "job" not in labels:
        labels["job"] = run.job
    # the trace log's glog prefix, else the log's name, else a profile's distributedInfo
    rank = next((r for r in (trace.get("rank"), run.rank, facts.get("rank")) if r is not None), None)
    pid = trace.get("pid") or run.pid
    _own_fate(labels, rank, pid, trace, facts)
    for k in ("world_size", "dist_backend"):  # a profile's distributedInfo: how the job was run
        if facts.get(k) is not None:
            labels.setdefault(k, facts[k])
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
             or facts.get("harness_suite"))
    if model is None:
        # a run nobody named is named by its folder or file; a zoo run's name also says its workload
        model = _default_model(run)
        if named := run_name(model):
            model = named[0]
            for k, v in named[1].items():
                labels.setdefault(k, v)
    started = trace.get("started_at") or _debug_started(run) or start_time(labels.get("started_at"))
    fingerprint = hashlib.blake2b(digest_size=16)
    for rel, h in sorted(hashes.items()):
        fingerprint.update(f"{rel}\0{h}\n".encode())
    said = _caches_said(man, cli_labels, trace, facts)
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
        "pid": pid,
        "python_version": trace.get("python_version"),
        "triton_version": trace.get("triton_version") or _str(labels.get("triton")),
        "cuda_version": trace.get("cuda_version") or facts.get("cuda_version") or _str(labels.get("cuda")),
        "artifact_bytes": sum(a.size for a in run.artifacts),
        "caches_said": said[0] if said else None,
        "caches_said_by": said[1] if said else None,
    }


def _own_fate(labels: dict[str, Label], rank: int | None, pid: int | None, trace: Facts, facts: Facts) -> None:
    """How this process ended, where its files say it, into the labels views/13_run_unfinished.sql
    reads: a rank's own exit code from torchrun's failure summary (the manifest's is torchrun's, kept
    as `job_exit_code`), and the first compile its trace began and never reported (`unfinished_compile`:
    Dynamo writes compilation_metrics in a `finally`, so only a process that died mid-compile lacks it)."""
    exits = facts.get("rank_exits") or {}
    mine = exits.get(rank) if rank is not None else None
    if mine is not None and (pid is None or mine["pid"] == pid) and mine["exit_code"] != labels.get("exit_code"):
        if "exit_code" in labels:
            labels["job_exit_code"] = labels["exit_code"]
        labels["exit_code"] = mine["exit_code"]
    if unfinished := trace.get("unfinished_compiles"):
        labels.setdefault("unfinished_compile", unfinished[0])


def _caches_said(man: Facts, cli_labels: Mapping[str, Label] | None, trace: Facts,
                 facts: Facts) -> cache_settings.CacheSaid | None:
    """Whether the run's files say Inductor's caches were off or on, and which (cache_settings.settle:
    one saying off wins); the manifest's key, else a `--label caches=`, first."""
    label = cache_settings.from_manifest((man.get("labels") or {}).get("caches"))
    if label is None and (given := cache_settings.from_manifest((cli_labels or {}).get("caches"))):
        label = (given[0], given[1].replace("manifest:", "--label", 1))
    return cache_settings.settle(label, trace.get("caches_said"), facts.get("caches_said"))


DEVICE_WORDS = {"cpu": "cpu", "cuda": "cuda", "gpu": "cuda", "xpu": "xpu", "mps": "mps", "spyre": "spyre"}


def _device(run: Run, labels: dict[str, Label], trace: Facts, facts: Facts,
            tables: dict[str, list[Row]]) -> str | None:
    """What the run ran on, from the most direct word there is: the manifest, the generated code,
    the IR's buffer layouts, the tensors the trace describes, the benchmark harness's rows (their
    `dev` column or their file's name, when every row names one), a CPU-only torch build (`+cpu`), then
    the run's folder names (`cpu-torch2.13/`, `gpu-h200/`). A run killed before any kernel was written
    still says it in most of these; NULL only when none does."""
    build = _str(labels.get("torch")) or trace.get("compiler_version") or facts.get("compiler_version") or ""
    found = (_str(labels.get("device")) or trace.get("device") or facts.get("device")
             or next((r["device"] for r in tables.get("layouts", ()) if r.get("device")), None)
             or trace.get("tensor_device")
             or _harness_device(tables)
             or ("cpu" if build.endswith("+cpu") else None)
             or _folder_device(run))
    return found.split(":", 1)[0] if found else None


def _harness_device(tables: dict[str, list[Row]]) -> str | None:
    """The one device every harness row of the run names: a run of CSVs of several devices, or
    holding a file that names none (CI's expected values of several configs), names none, so that
    a row's own device is never taken for its neighbour's (views/61_harness.sql's harness_rows)."""
    found = {str(r["device"]).split(":", 1)[0].lower() if r.get("device") else None
             for r in tables.get("harness_results", ())}
    return found.pop() if len(found) == 1 else None


def _folder_device(run: Run) -> str | None:
    """A device named by the run's folder or its parent (one device word among their parts)."""
    base = run.folder
    words = {DEVICE_WORDS[w] for name in (base.name, base.parent.name)
             for w in re.split(r"[^a-z0-9]+", name.lower()) if w in DEVICE_WORDS}
    return words.pop() if len(words) == 1 else None


def _str(v: Label) -> str | None:
    return None if v is None else str(v)


def _default_model(run: Run) -> str:
    """A name for a run nobody named: the folder the artifacts were written for."""
    root = run.root
    if run.job:  # the ranks of a job ran one model, whatever folder each rank wrote to
        return run.job
    if DEBUG_RUN_RE.match(root.name) and root.parent.name == "torch_compile_debug":
        return root.parent.parent.name
    if run.root_is_log:
        if root.name.startswith("dedicated_log_torch_trace_"):
            # TORCH_TRACE names logs with a random suffix: the folder says more
            parent = root.parent
            return parent.parent.name if parent.name == "trace" else parent.name
        name = root.name.removesuffix(".gz")
        name = name.rsplit(".", 1)[0] if name.endswith((".log", ".txt", ".json", ".csv")) else name
        # a profile's own suffixes (tensorboard_trace_handler's `.pt.trace.json`, `.profile.json`)
        return re.sub(r"\.(pt\.trace|trace|profile|torch_logs)$", "", name) or name
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
