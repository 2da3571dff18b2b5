"""`iwh capture`: run a command with every Inductor artifact switched on, and record what ran.

The capture writes, under one output folder, what the warehouse ingests:

    torch_compile_debug/   TORCH_COMPILE_DEBUG tree (TORCH_COMPILE_DEBUG_DIR=<out>)
    trace/                 TORCH_TRACE structured log
    triton_cache/          TRITON_CACHE_DIR: each compiled Triton kernel's metadata (warps, stages,
                           shared memory); not when the caller names its own; with caches on,
                           the metadata of the entries the command added to the cache, copied
    torch_logs.txt         the command's stderr, with TORCH_LOGS="graph_breaks,recompiles,fusion,cudagraphs"
                           plus the caller's TORCH_LOGS
    stdout.txt             the command's stdout
    profile.json           with --profile, if the command honours IWH_PROFILE
    manifest.json          what ran: model, labels, command, start, exit code, wall time, versions

A failing command is captured like any other: its exit code is data. This module imports only
the standard library, so the zoo runner can use it on machines without the warehouse's other
dependencies; the command and the ingest after it are `cli/commands/capture.py`.
"""

from __future__ import annotations

import itertools
import json
import os
import platform
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TextIO


MANIFEST = "manifest.json"
# A command may write scalar facts only it knows (device name, Triton version, ok/error) here;
# they are folded into the manifest.
RUN_FACTS = "run_facts.json"
PROFILE = "profile.json"

CAPTURE_ENV = {
    "TORCH_COMPILE_DEBUG": "1",
    "INDUCTOR_PROVENANCE": "1",
    "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1",
    "TORCH_LOGS": "graph_breaks,recompiles,fusion,cudagraphs",
}
# A value manifest.json and run_facts.json hold: JSON scalars only.
Scalar = str | int | float | bool | None
# Keys capture itself owns: neither labels nor run facts may overwrite them.
CORE_KEYS = ("model", "command", "started_at", "exit_code", "wall_s", "host", "python", "torch", "caches")


class FolderTaken(Exception):
    """The output folder already holds files: a capture never writes over another's."""


def new_folder(base: Path) -> Path:
    """`base`, else `base-2`, `base-3`, ...: the first that did not exist, made by this call. mkdir is
    atomic, so two captures started in the same second (or under a clock set back) get two folders."""
    base.parent.mkdir(parents=True, exist_ok=True)
    for n in itertools.count(1):
        path = base if n == 1 else base.with_name(f"{base.name}-{n}")
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
    raise AssertionError("unreachable")


def claim_folder(out: Path) -> None:
    """Make `out` this capture's: it must be new or empty, and its `trace/` is made exclusively, so of
    two captures given one folder at once only one proceeds."""
    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        raise FolderTaken(f"{out} already holds files: choose another --out (a capture never reuses a folder)")
    try:
        (out / "trace").mkdir()
    except FileExistsError:
        raise FolderTaken(f"{out} is being written by another capture: choose another --out") from None


@dataclass
class CaptureResult:
    out: Path
    exit_code: int
    wall_s: float
    timed_out: bool
    manifest: dict[str, Any]  # what manifest.json says: JSON scalars (Scalar) by key

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


def capture_env(out: Path, extra: Mapping[str, object] | None = None, cache_dir: Path | None = None) -> dict[str, str]:
    """The command's environment. Caches are forced off, so every graph is compiled and writes its
    artifacts, unless `cache_dir` is given: then the FX graph, AOTAutograd and autotune caches work as
    users leave them, in that folder (share it between runs to capture a warm compile)."""
    env = dict(os.environ)
    env.update(CAPTURE_ENV)
    if os.environ.get("TORCH_LOGS"):
        # the caller's logs as well as the capture's (`+torch._inductor.runtime.triton_heuristics`:
        # the autotuner's best configs with their registers and spills)
        env["TORCH_LOGS"] = f"{CAPTURE_ENV['TORCH_LOGS']},{os.environ['TORCH_LOGS']}"
    if cache_dir is not None:
        del env["TORCHINDUCTOR_FORCE_DISABLE_CACHES"]
        env["TORCHINDUCTOR_CACHE_DIR"] = str(Path(cache_dir).resolve())
    env["TORCH_COMPILE_DEBUG_DIR"] = str(out)
    env["TORCH_TRACE"] = str(out / "trace")
    if cache_dir is None:
        # Triton's cache holds what no other artifact says of a kernel (shared memory, the target);
        # with caches on it stays in Inductor's cache folder, where a warm compile finds it
        env.setdefault("TRITON_CACHE_DIR", str(out / "triton_cache"))
    env["IWH_RUN_FACTS"] = str(out / RUN_FACTS)
    # Python buffers a piped stdout: without this, stdout and stderr lose their relative order.
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.update({k: str(v) for k, v in (extra or {}).items()})
    return env


def capture(
    cmd: list[str],
    out: Path,
    model: str | None,
    labels: dict[str, str],
    python_env: Mapping[str, object] | None = None,
    *,
    echo: bool = True,
    timeout_s: float | None = None,
    cache_dir: Path | None = None,
) -> CaptureResult:
    """Run `cmd` with capture settings, saving its output and `manifest.json` under `out`.

    `python_env` holds extra environment variables for the command (IWH_PROFILE, a config
    switch, ...); they win over the capture settings. `echo=False` keeps the command's output
    off the terminal (the zoo runs several at once). A command still running after `timeout_s`
    is killed with its process group and recorded as timed out (exit code 124). `cache_dir`:
    compile with Inductor's caches on, kept there (see `capture_env`). `out` must be new or empty
    (FolderTaken otherwise).
    """
    out = Path(out).resolve()
    claim_folder(out)
    env = capture_env(out, python_env, cache_dir)
    # with caches on, Triton's cache stays where a warm compile finds it: what the command adds is copied
    triton = Path(env.get("TRITON_CACHE_DIR") or Path(cache_dir).resolve() / "triton") if cache_dir is not None else None
    before = _triton_metadata(triton) if triton is not None else {}
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    t0 = time.monotonic()
    exit_code, timed_out = _run_teed(cmd, env, out, echo=echo, timeout_s=timeout_s)
    wall_s = round(time.monotonic() - t0, 3)
    if triton is not None:
        _keep_triton_metadata(triton, before, out / "triton_cache")
    manifest = _manifest(cmd, model, labels, out, started_at, exit_code, wall_s, timed_out)
    manifest["caches"] = "off" if cache_dir is None else "on"
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    return CaptureResult(out, exit_code, wall_s, timed_out, manifest)


def _triton_metadata(folder: Path) -> dict[Path, int]:
    """The metadata JSON of each kernel in a Triton cache folder (`<hash>/<kernel>.json`, at any depth:
    Inductor puts one folder a device under its cache), with its mtime; group files left out."""
    if not folder.is_dir():
        return {}
    found = {}
    for path in folder.rglob("*.json"):
        if not path.name.startswith("__grp__"):
            try:
                found[path] = path.stat().st_mtime_ns
            except OSError:
                continue
    return found


def _keep_triton_metadata(folder: Path, before: dict[Path, int], dest: Path) -> int:
    """Copy the metadata the command wrote into the cache (new, or rewritten) to `dest/<hash>/`; how many."""
    kept = 0
    for path, mtime in _triton_metadata(folder).items():
        if before.get(path) == mtime:
            continue
        target = dest / path.parent.name / path.name
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
            kept += 1
        except OSError:
            continue  # a cache entry replaced while copying: the others are still worth keeping
    return kept


def _run_teed(
    cmd: list[str], env: dict[str, str], out: Path, *, echo: bool, timeout_s: float | None
) -> tuple[int, bool]:
    with open(out / "stdout.txt", "wb") as stdout_file, open(out / "torch_logs.txt", "wb") as stderr_file:
        try:
            proc = subprocess.Popen(
                cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
            )
        except OSError as exc:
            # A command that cannot start is still a run: its reason lands where stderr would.
            stderr_file.write(f"iwh capture: cannot start {cmd[0]!r}: {exc}\n".encode())
            return 127, False
        pumps = [
            threading.Thread(target=_tee, args=(proc.stdout, stdout_file, sys.stdout if echo else None)),
            threading.Thread(target=_tee, args=(proc.stderr, stderr_file, sys.stderr if echo else None)),
        ]
        for pump in pumps:
            pump.start()
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        except KeyboardInterrupt:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait()
        for pump in pumps:
            pump.join()
    if timed_out:
        return 124, True
    # Shell convention (128 + signal), so the manifest matches what `$?` would have said.
    return (128 - proc.returncode if proc.returncode < 0 else proc.returncode), False


class _Buffered(Protocol):
    def read1(self, n: int, /) -> bytes: ...


def _tee(source: _Buffered, sink: BinaryIO, live: TextIO | None) -> None:
    for chunk in iter(lambda: source.read1(65536), b""):
        sink.write(chunk)
        if live is not None:
            _write_live(live, chunk)
    source.close()  # type: ignore[attr-defined]


def _write_live(stream: TextIO, chunk: bytes) -> None:
    raw = getattr(stream, "buffer", None)
    if raw is not None:
        stream.flush()
        raw.write(chunk)
        raw.flush()
    else:
        stream.write(chunk.decode(errors="replace"))
        stream.flush()


def _manifest(
    cmd: list[str],
    model: str | None,
    labels: dict[str, str],
    out: Path,
    started_at: str,
    exit_code: int,
    wall_s: float,
    timed_out: bool,
) -> dict[str, Scalar]:
    python, torch = _interpreter_versions(cmd)
    manifest: dict[str, Scalar] = {}
    manifest.update(_run_facts(out / RUN_FACTS))
    manifest.update(labels)
    manifest.update(
        model=model if model is not None else manifest.get("model") or model_from_command(cmd),
        command=shlex.join(cmd),
        started_at=started_at,
        exit_code=exit_code,
        wall_s=wall_s,
        host=socket.gethostname(),
        python=python,
        torch=torch,
    )
    if timed_out:
        manifest["timed_out"] = True
    return {k: v for k, v in manifest.items() if v is not None}


def _run_facts(path: Path) -> dict[str, Scalar]:
    """Scalar facts the command wrote about itself, taken out of their file into the manifest."""
    try:
        facts = json.loads(path.read_text())
        path.unlink()
    except (OSError, ValueError):
        return {}
    if not isinstance(facts, dict):
        return {}
    return {
        k: v
        for k, v in facts.items()
        if (k not in CORE_KEYS or k == "model") and (v is None or isinstance(v, (str, int, float, bool)))
    }


def model_from_command(cmd: list[str]) -> str:
    """`python train.py` -> `train`: the script name is the best guess when no --model is given."""
    for arg in cmd[1:] if _is_python(cmd) else cmd:
        if not arg.startswith("-"):
            return Path(arg).stem
    return Path(cmd[0]).stem


def _is_python(cmd: list[str]) -> bool:
    return Path(cmd[0]).name.startswith("python")


def _interpreter_versions(cmd: list[str]) -> tuple[str, str | None]:
    """Python and torch versions of the command's own interpreter, when it is a Python."""
    here = platform.python_version()
    if not _is_python(cmd):
        return here, None
    code = "import platform; print(platform.python_version()); import torch; print(torch.__version__)"
    try:
        done = subprocess.run([cmd[0], "-c", code], capture_output=True, text=True, timeout=120, env=_quiet_env())
    except (OSError, subprocess.TimeoutExpired):
        return here, None
    lines = done.stdout.split()
    return (lines[0] if lines else here), (lines[1] if len(lines) > 1 else None)


def _quiet_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in CAPTURE_ENV and not k.startswith("TORCH_")}
