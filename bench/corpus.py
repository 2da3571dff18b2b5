"""Where the benchmark's inputs are: the unpacked corpus of /tmp/corpus when present, else the
archives of ../shared/corpus unpacked once into bench/work/corpus."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "bench" / "work"
SHARED = Path(os.environ.get("IWH_SHARED_CORPUS", ROOT.parent / "shared" / "corpus"))
UNPACKED = Path(os.environ.get("IWH_UNPACKED_CORPUS", "/tmp/corpus"))
GPU_ARCHIVE = "gpu-h200-torch2.11.tar.xz"
CPU_ARCHIVES = ("cpu-torch2.6.0.tar.xz", "cpu-torch2.13.tar.xz", "cpu-torch2.14.1.tar.xz")


class Missing(Exception):
    """The shared corpus is not on this machine: sections that need it are skipped."""


def _archive_dir(archive: str) -> Path:
    """The folder of runs an archive holds (its top folder, named like the archive), unpacked."""
    name = archive.removesuffix(".tar.xz")
    for candidate in (UNPACKED / name / name, UNPACKED / "gpu" / name, WORK / "corpus" / name / name):
        if candidate.is_dir() and any(candidate.iterdir()):
            return candidate
    src = SHARED / archive
    if not src.exists():
        raise Missing(f"{src} is absent (the shared corpus)")
    dest = WORK / "corpus" / name
    partial = dest.with_name(name + ".partial")
    print(f"unpacking {src} into {dest} ...", flush=True)
    with tarfile.open(src) as tf:
        tf.extractall(partial, filter="data")
    partial.rename(dest)
    return dest / name


def gpu_runs() -> Path:
    return _archive_dir(GPU_ARCHIVE)


def cpu_runs() -> list[Path]:
    return [_archive_dir(a) for a in CPU_ARCHIVES]


def trace_folder() -> Path:
    """bench/work/traces/<run>/x.log: links to the 67 GPU runs' TORCH_TRACE logs and nothing else."""
    dest = WORK / "traces"
    runs = gpu_runs()
    for run in sorted(p for p in runs.iterdir() if p.is_dir()):
        logs = sorted((run / "trace").glob("*.log"))
        if not logs:
            continue
        link = dest / run.name / "x.log"
        if link.is_symlink() and link.readlink() != logs[0]:
            link.unlink()  # left by a run on a corpus elsewhere
        if not link.is_symlink():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(logs[0])
    return dest


def trace_logs() -> list[Path]:
    return sorted(trace_folder().glob("*/x.log"))


def size_mb(paths: list[Path]) -> float:
    total = 0
    for p in paths:
        if p.is_file():
            total += p.stat().st_size
        else:
            total += sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
    return total / 1e6
