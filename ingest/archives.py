"""Runs inside zip archives, read as downloaded: `iwh ingest test-reports-*.zip` (PyTorch CI's
artifacts: `test-reports-test-<job>-<shard>-<shards>-<runner>_<job id>.zip`, as
tools/stats/upload_dynamo_perf_stats.py names them, holding `test/test-reports/*.csv` and the JSON
records beside them), or a folder of such archives.

An archive's members are listed and grouped into runs by the rules of local discovery
(`ingest.discover.group`), each member a pure path below the archive's own (`/dl/test-reports-x.zip/
test/test-reports/inductor_..._performance.csv`), which is what a run's source_path says (for the
harness's CSVs, the folder they lie in: `/dl/test-reports-x.zip/test/test-reports`). A run's
members are unpacked into a temporary folder right before it is parsed and deleted after, as object
storage's are (`ingest/remote.py`); the archive's name is no part of a run's identity, its members'
contents are. A damaged archive is a skipped path, said in the summary, never a crash.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
import os
from pathlib import Path, PurePath, PurePosixPath

from inductor_warehouse.ingest.discover import group
from inductor_warehouse.ingest.listing import SNIFF_BYTES, Artifact, Entry, Run, Skipped, gunzip_head, relocated, under
from inductor_warehouse.ingest.reading import CHUNK

SUFFIX = ".zip"


def is_archive(path: str | os.PathLike[str]) -> bool:
    p = Path(str(path))
    return p.suffix == SUFFIX and p.is_file() and zipfile.is_zipfile(p)


def archives_under(folder: Path) -> list[Path]:
    """The zip archives a folder holds, at any depth (hidden folders left out, as discovery does)."""
    return sorted(p for p in folder.rglob(f"*{SUFFIX}")
                  if not any(part.startswith(".") for part in p.relative_to(folder).parts[:-1]) and is_archive(p))


def split(path: PurePath) -> tuple[Path, str] | None:
    """(archive, member) of a member's pure path; None for a path in no archive."""
    parts = path.parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i].endswith(SUFFIX):
            archive = Path(*parts[:i + 1])
            if archive.is_file():
                return archive, "/".join(parts[i + 1:])
    return None


def discover_archive(archive: Path) -> tuple[list[Run], Skipped, list[str]]:
    """The runs an archive's members make, as discovery groups a folder's files."""
    skipped = Skipped()
    try:
        with zipfile.ZipFile(archive) as zf:
            infos = [i for i in zf.infolist() if not i.is_dir()]
    except (zipfile.BadZipFile, OSError):
        skipped.add("zip archive that cannot be read", archive)
        return [], skipped, []
    root = PurePosixPath(archive.resolve())
    entries = []
    for info in infos:
        name = info.filename
        if name.startswith("/") or ".." in name.split("/") or any(p.startswith(".") for p in name.split("/")[:-1]):
            skipped.add("zip member outside its archive or in a hidden folder", root / name)
            continue
        mtime = datetime(*info.date_time).timestamp() if info.date_time[0] >= 1980 else 0.0
        entries.append(Entry(root / name, info.file_size, mtime))
    entries.sort(key=lambda e: e.path)
    runs, more = group(entries, _head)
    skipped.absorb(more)
    for run in runs:
        run.source = str(run.root)
    return runs, skipped, []


def _head(path: PurePath, size: int = SNIFF_BYTES) -> bytes | None:
    where = split(path)
    if where is None:
        return None
    try:
        with zipfile.ZipFile(where[0]) as zf, zf.open(where[1]) as fh:
            data = fh.read(size)
    except (zipfile.BadZipFile, KeyError, OSError, EOFError):
        return None
    return gunzip_head(data, size) if path.name.endswith(".gz") else data


def in_archive(run: Run) -> bool:
    return run.source is not None and split(PurePath(run.source)) is not None


@contextmanager
def unpacked(run: Run) -> Iterator[Run]:
    """The run with its members on this machine's disk: a copy in a temporary folder (same relative
    paths and mtimes), deleted when done."""
    tmp = Path(tempfile.mkdtemp(prefix="iwh-zip-"))
    try:
        by_archive: dict[Path, list[tuple[Artifact, str]]] = {}
        for a in run.artifacts:
            archive, member = split(a.path)  # type: ignore[misc]  # a run of an archive: each path is in one
            by_archive.setdefault(archive, []).append((a, member))
        for archive, members in by_archive.items():
            with zipfile.ZipFile(archive) as zf:
                for a, member in members:
                    dest = under(tmp, a.path)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    with zf.open(member) as src, open(dest, "wb") as out:
                        shutil.copyfileobj(src, out, CHUNK)
        yield relocated(run, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def member_hash(path: PurePath) -> str | None:
    """A member's content hash as the warehouse records it (`ingest.reading.file_hash`)."""
    where = split(path)
    if where is None:
        return None
    hasher = hashlib.blake2b(digest_size=16)
    try:
        with zipfile.ZipFile(where[0]) as zf, zf.open(where[1]) as fh:
            while chunk := fh.read(CHUNK):
                hasher.update(chunk)
    except (zipfile.BadZipFile, KeyError, OSError):
        return None
    return hasher.hexdigest()
