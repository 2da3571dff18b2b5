"""Timing helpers. The machine is shared: every figure is a median of repeats, and commands also
report their CPU seconds, which other processes do not inflate as much as wall time."""

from __future__ import annotations

import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "results.json"  # what `make bench` measured last; bench/report.py prints it


def byte_compile() -> None:
    """The packages pyproject.toml installs, compiled as pip compiles an installed package's (`make
    setup` and the bench call it). An editable checkout compiles them at first import, or at every
    start of every command where PYTHONDONTWRITEBYTECODE is set, which the bench would then time."""
    import importlib.util

    from inductor_warehouse import PACKAGES

    for package in ("inductor_warehouse", *(f"inductor_warehouse.{p}" for p in PACKAGES)):
        for folder in importlib.util.find_spec(package).submodule_search_locations:
            compileall.compile_dir(folder, quiet=1)


# `iwh` as installed, but through this interpreter whatever PATH says
IWH = [sys.executable, "-c", "from inductor_warehouse.cli.main import main; main()"]


@dataclass
class Proc:
    wall_s: float
    cpu_s: float  # user + system of the command and every child it waited for (parse workers)
    max_rss_mb: float  # the largest resident set of any one of its processes
    rc: int
    output: str

    def as_dict(self) -> dict:
        d = asdict(self)
        d.pop("output")
        return d


TIME = "/usr/bin/time"


def run(cmd: list[str], env: dict | None = None) -> Proc:
    """Run a command; its own rusage comes from wait4, so earlier children do not leak into it.
    Its peak RSS comes from GNU time when there is one: Linux carries a process's peak RSS across
    fork and exec, so a child of this process (GBs after building warehouses) would report ours."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        timed = [TIME, "-f", "%M", "-o", rss.name, *cmd] if os.path.exists(TIME) else cmd
        t0 = time.perf_counter()
        p = subprocess.Popen(timed, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             env={**os.environ, **(env or {})})
        out = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        kb = rss.read().strip().splitlines()
    p.returncode = os.waitstatus_to_exitcode(status)
    peak_mb = int(kb[-1]) / 1024 if kb and kb[-1].isdigit() else usage.ru_maxrss / 1024
    return Proc(wall, usage.ru_utime + usage.ru_stime, peak_mb, p.returncode, out.decode(errors="replace"))


def check(proc: Proc, what: str) -> Proc:
    if proc.rc != 0:
        raise RuntimeError(f"{what} failed (exit {proc.rc}):\n{proc.output[-2000:]}")
    return proc


def median(values: list[float]) -> float:
    return statistics.median(values)


def timed(fn, repeats: int, warmup: int = 1) -> dict:
    """Median and spread of fn()'s wall time in ms, after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return {"median_ms": median(times), "min_ms": min(times), "max_ms": max(times), "n": repeats}


def load_average() -> float:
    return os.getloadavg()[0]
