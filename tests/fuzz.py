"""A seeded mutation fuzzer over real fixture runs: the ingest must never crash, hang or blow up.

    python -m tests.fuzz                      # 10,000 mutations (`make fuzz`)
    python -m tests.fuzz -n 300 --seed 0      # what `make test` runs (tests/test_fuzz.py)
    python -m tests.fuzz --start 9425 -n 25   # one reported batch again, into a new warehouse

Each mutation copies one real run (hard links: cheap) and damages one to three of its files:
truncated, bytes flipped, invalid UTF-8, lines shuffled, a huge line, deep nesting, emptied, zeroed,
replaced by binary, a symlink loop, a FIFO, an unreadable file, a name with a newline. Mutated runs
are ingested in batches into one warehouse by `iwh ingest`, a process each. Checked for each batch:
- it exits 0 (else a crash; the batch is then ingested run by run to name the mutation, printed
  with its seed and number, so it can be replayed and kept as a fixture);
- it finishes within 60 s a run (a hang);
- every run found is either written, recorded as refused, or the same files as another run of its
  batch (stored once), never lost;
and, at the end, the peak RSS of the largest of those processes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SEEDS = [
    FIXTURES / "runs" / "cpu-torch2.6.0" / "mlp",
    FIXTURES / "runs" / "cpu-torch2.13" / "transformer",
    FIXTURES / "runs" / "gpu-torch2.11" / "mlp__train__fp32__default",
    FIXTURES / "killed" / "transformer_killed_in_inductor",
    FIXTURES / "spyre" / "softmax",
    FIXTURES / "torch_trace" / "eras",
]
HANG_SECONDS = 60


@dataclass
class Report:
    tried: int = 0
    crashes: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    peak_rss_mb: float = 0.0
    worst: str = ""  # the batch that peaked
    seconds: float = 0.0

    def line(self) -> str:
        return (f"mutations tried: {self.tried}, crashes: {len(self.crashes)}, hangs: {len(self.hangs)}, "
                f"runs lost: {len(self.lost)}, peak RSS: {self.peak_rss_mb:.0f} MB, {self.seconds:.0f} s")


# ---- mutations: (rng, path, big) -> a description; `big` allows the 20 MB line ---------------------

def truncate(rng, p: Path, big) -> str:
    data = p.read_bytes()
    cut = rng.randrange(len(data) + 1)
    _rewrite(p, data[:cut])
    return f"truncated at {cut}"


def flip(rng, p: Path, big) -> str:
    data = bytearray(p.read_bytes())
    for _ in range(max(1, len(data) // 1000)):
        if data:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    _rewrite(p, bytes(data))
    return "bytes flipped"


def bad_utf8(rng, p: Path, big) -> str:
    data = p.read_bytes()
    at = rng.randrange(len(data) + 1)
    _rewrite(p, data[:at] + b"\xff\xfe\xc3\x28\xa0\xa1" + data[at:])
    return f"invalid UTF-8 at {at}"


def shuffle(rng, p: Path, big) -> str:
    lines = p.read_bytes().split(b"\n")
    rng.shuffle(lines)
    _rewrite(p, b"\n".join(lines))
    return "lines shuffled"


def huge_line(rng, p: Path, big) -> str:
    size = (20 << 20) if big else (1 << 20)
    data = p.read_bytes()
    at = rng.randrange(len(data) + 1)
    _rewrite(p, data[:at] + b"x" * size + data[at:])
    return f"a {size >> 20} MB line at {at}"


def deep_nesting(rng, p: Path, big) -> str:
    data = p.read_bytes()
    at = rng.randrange(len(data) + 1)
    _rewrite(p, data[:at] + b"[" * 200_000 + b"{" * 1000 + data[at:])
    return f"200,000 open brackets at {at}"


def empty(rng, p: Path, big) -> str:
    _rewrite(p, b"")
    return "emptied"


def zeroed(rng, p: Path, big) -> str:
    _rewrite(p, b"\0" * p.stat().st_size)
    return "zeroed"


def binary(rng, p: Path, big) -> str:
    _rewrite(p, rng.randbytes(rng.randrange(1, 65536)))
    return "binary garbage"


def symlink_loop(rng, p: Path, big) -> str:
    p.unlink()
    p.symlink_to(p.name)  # points at itself
    return "a symlink to itself"


def fifo(rng, p: Path, big) -> str:
    p.unlink()
    os.mkfifo(p)
    return "a FIFO"


def unreadable(rng, p: Path, big) -> str:
    data = p.read_bytes()
    _rewrite(p, data)
    p.chmod(0)
    if os.geteuid() == 0:  # root reads anything: a dangling link is what root cannot read
        p.unlink()
        p.symlink_to(p.name + ".gone")
    return "unreadable"


def newline_name(rng, p: Path, big) -> str:
    twin = p.with_name(p.name.replace(".", "\n.", 1) if "." in p.name else p.name + "\n")
    shutil.copyfile(p, twin)
    return "a copy named with a newline"


MUTATIONS = [truncate, flip, bad_utf8, shuffle, huge_line, deep_nesting, empty, zeroed, binary, symlink_loop, fifo,
             unreadable, newline_name]


def _rewrite(p: Path, data: bytes) -> None:
    p.unlink()  # a hard link to the seed: never write through it
    p.write_bytes(data)


def mutate(seed_run: Path, dest: Path, rng: random.Random, big: bool) -> str:
    shutil.copytree(seed_run, dest, copy_function=os.link)
    files = sorted(p for p in dest.rglob("*") if p.is_file() and not p.is_symlink())
    said = []
    for target in rng.sample(files, min(len(files), rng.randint(1, 3))):
        how = rng.choice(MUTATIONS)
        said.append(f"{target.relative_to(dest)}: {how(rng, target, big)}")
    return "; ".join(said)


# ---- running ---------------------------------------------------------------------------------------

def run(mutations: int = 10_000, seed: int = 0, batch: int = 25, big: bool = True, out=sys.stdout,
        start: int = 0) -> Report:
    """Each batch of mutated runs is ingested by `iwh ingest` in a process of its own, as a user's
    would be: a crash is its exit, a hang its time limit, its peak RSS the children's."""
    report = Report()
    t0 = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="iwh-fuzz-"))
    db = str(work / "wh.duckdb")
    try:
        done, end = start, start + mutations
        while done < end:
            folder = work / f"batch{done}"
            folder.mkdir()
            cases = {}
            for i in range(min(batch, end - done)):
                rng = random.Random(f"{seed}:{done + i}")
                seed_run = SEEDS[(done + i) % len(SEEDS)]
                dest = folder / f"m{done + i}" / seed_run.name
                dest.parent.mkdir()
                cases[dest.parent] = f"mutation {done + i} of seed {seed} ({seed_run.name}): " + mutate(
                    seed_run, dest, rng, big)
            report.tried += len(cases)
            _ingest(folder, db, cases, report, out)
            shutil.rmtree(folder, ignore_errors=True)
            done += len(cases)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report.seconds = time.monotonic() - t0
    return report


# `iwh` that says its peak RSS as it exits, so the worst batch can be named. VmHWM belongs to the
# child's own address space; ru_maxrss keeps the parent's high-water mark across fork and exec.
CHILD = ("import atexit, sys\n"
         "def _peak():\n"
         "    with open('/proc/self/status') as f:\n"
         "        kb = next(line.split()[1] for line in f if line.startswith('VmHWM:'))\n"
         "    print(f'peak_rss_kb={kb}', file=sys.stderr)\n"
         "atexit.register(_peak)\n"
         "from inductor_warehouse.cli.main import main; main()")


def _ingest(folder: Path, db: str, cases: dict[Path, str], report: Report, out) -> None:
    from inductor_warehouse.ingest.discover import discover

    found = len(discover([folder]).runs)
    cmd = [sys.executable, "-c", CHILD, "ingest", str(folder), "--db", db, "--force", "--format", "json"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=HANG_SECONDS * len(cases))
    except subprocess.TimeoutExpired:
        if len(cases) > 1:
            for one, what in cases.items():
                _ingest(one, db, {one: what}, report, out)
            return
        report.hangs.append(next(iter(cases.values())))
        print(f"HANG: {report.hangs[-1]}", file=out)
        return
    if done.returncode != 0:
        if len(cases) > 1:  # which mutation makes it?
            for one, what in cases.items():
                _ingest(one, db, {one: what}, report, out)
            return
        report.crashes.append(f"{next(iter(cases.values()))}: {done.stderr.strip()[-1500:]}")
        print(f"CRASH: {report.crashes[-1]}", file=out)
        return
    peak = max((int(x) for x in re.findall(r"peak_rss_kb=(\d+)", done.stderr)), default=0) / 1024
    if peak > report.peak_rss_mb:
        report.peak_rss_mb, report.worst = peak, "; ".join(cases.values())
    try:
        summary = json.loads(done.stdout)
    except ValueError:  # something besides the summary reached stdout: a defect too
        if len(cases) > 1:
            for one, what in cases.items():
                _ingest(one, db, {one: what}, report, out)
            return
        report.crashes.append(f"{next(iter(cases.values()))}: stdout is not the JSON summary: {done.stdout[:1500]!r}")
        print(f"CRASH: {report.crashes[-1]}", file=out)
        return
    # every run found is written, refused and recorded as such, or the same files as another run
    # of the batch (a mutation that changed nothing the run's id is made of): none is lost on the way
    if summary["runs"] + summary["refused_runs"] + summary["replaced_runs"] != found:
        report.lost.append(f"{found} runs found, {summary['runs']} written, {summary['refused_runs']} refused, "
                           f"{summary['replaced_runs']} the same as another: "
                           + "; ".join(cases.values()))
        print(f"LOST: {report.lost[-1]}", file=out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--mutations", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--start", type=int, default=0,
                    help="first mutation's number: replays a reported batch, into a new warehouse")
    ap.add_argument("--batch", type=int, default=25, help="mutated runs per ingest")
    ap.add_argument("--small", action="store_true", help="huge lines of 1 MB instead of 20 MB")
    args = ap.parse_args(argv)
    report = run(args.mutations, args.seed, args.batch, big=not args.small, start=args.start)
    print(report.line())
    print(f"peak RSS in the batch: {report.worst[:3000]}")
    return 1 if report.crashes or report.hangs or report.lost else 0


if __name__ == "__main__":
    sys.exit(main())
