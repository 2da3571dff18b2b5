"""Runs in object storage: `iwh ingest s3://bucket/prefix`.

A prefix is listed (paginated) and its objects grouped into runs by the rules of local discovery
(`ingest.discover.group`); a file whose kind only its content tells (a trace log, a profile) is
sniffed with a ranged read of its first bytes. A run's objects are fetched into a temporary folder
right before the run is parsed, by whichever process or Ray task parses it, and deleted after: the
parsers read local files as ever, and the run keeps its s3:// URL as source_path, so the re-ingest
checks (paths, sizes, mtimes = LastModified, content hashes) and run ids (content hashes) work as
for local runs. An object that cannot be fetched fails its run (`FetchError`), never the ingest.

Credentials come from boto3's usual chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
AWS_SESSION_TOKEN, ~/.aws, an instance role); the region and an S3-compatible server's endpoint
(AWS_ENDPOINT_URL) are read as for the warehouse's own S3 data (`store/extensions.py`). boto3 is
imported only when an s3:// path is given, so `iwh` starts as fast without it.
"""

from __future__ import annotations


import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path, PurePath, PurePosixPath
from typing import Any

from inductor_warehouse.ingest import archives
from inductor_warehouse.ingest.discover import Discovery, discover, group
from inductor_warehouse.ingest.listing import Run, Skipped, relocated, under
from inductor_warehouse.ingest.listing import SNIFF_BYTES, Artifact, Entry, gunzip_head, in_graph_folders
from inductor_warehouse.ingest.reading import CHUNK
from inductor_warehouse.store.extensions import s3_endpoint, s3_region

SCHEME = "s3://"
# A run is hundreds of small files, each a request whose latency dwarfs its transfer: fetched and
# sniffed a few at a time.
THREADS = 8
# boto3 ships no types: its S3 client's class is made at run time, and a listed object is a dict of
# its fields (Key, Size, LastModified, ...)
S3Object = dict[str, Any]


class RemoteError(Exception):
    """Object storage cannot be read at all (no boto3, no such bucket, no credentials): the ingest stops."""


class FetchError(RemoteError):
    """One object of a run cannot be read: that run fails, the others go on."""


def is_remote(path: str | os.PathLike[str]) -> bool:
    return str(path).startswith(SCHEME)


def discover_anywhere(paths: Sequence[str | os.PathLike[str]]) -> Discovery:
    """Runs under local paths, zip archives (ingest/archives.py: as CI's artifacts are downloaded)
    and s3:// URLs alike."""
    local = [p for p in paths if not is_remote(p) and not archives.is_archive(p)]
    found = discover(local) if local else Discovery([], Skipped(), [])
    zips = [Path(str(p)) for p in paths if not is_remote(p) and archives.is_archive(p)]
    for folder in (Path(str(p)) for p in local if Path(str(p)).is_dir()):
        inside = archives.archives_under(folder)
        zips += inside
        found.skipped.forget("unrecognised file", (p.absolute() for p in inside))  # read below, not skipped
    for archive in zips:
        runs, skipped, missing = archives.discover_archive(archive)
        found.runs.extend(runs)
        found.skipped.absorb(skipped)
        found.missing.extend(missing)
    for url in (str(p) for p in paths if is_remote(p)):
        runs, skipped, missing = _discover_s3(url)
        found.runs.extend(runs)
        found.skipped.absorb(skipped)
        found.missing.extend(missing)
    return found


def _split(url: str) -> tuple[str, str]:
    bucket, _, key = url[len(SCHEME):].partition("/")
    return bucket, key


def _path(bucket: str, key: str) -> PurePosixPath:
    # a pure path: nothing in discovery may stat or open it by mistake on this machine's disk
    return PurePosixPath("/", bucket, key)


def _where(path: PurePath) -> tuple[str, str]:
    """(bucket, key) of an object's path."""
    return path.parts[1], "/".join(path.parts[2:])


def url_of(path: PurePath) -> str:
    bucket, key = _where(path)
    return f"{SCHEME}{bucket}/{key}"


def _discover_s3(url: str) -> tuple[list[Run], Skipped, list[str]]:
    bucket, prefix = _split(url)
    prefix = prefix.rstrip("/")
    entries, skipped = _entries(bucket, prefix, _list(bucket, prefix))
    if not entries and not skipped:
        return [], skipped, [url]
    with ThreadPoolExecutor(THREADS) as pool:
        runs, more = group(entries, _head, mapper=pool.map)
    skipped.absorb(more)
    skipped.renamed(lambda p: url_of(PurePosixPath(p)))
    for run in runs:
        run.source = url_of(run.root)
    return runs, skipped, []


def _list(bucket: str, prefix: str) -> list[S3Object]:
    """Every object under the prefix: the object named by it, or those in the folder it names."""
    s3 = client()  # first: without boto3 (and botocore) it says which extra to install
    from botocore.exceptions import BotoCoreError, ClientError

    objects: list[S3Object] = []
    try:
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        for page in pages:
            objects.extend(o for o in page.get("Contents", ())
                           if not prefix or o["Key"] == prefix or o["Key"].startswith(prefix + "/"))
    except (BotoCoreError, ClientError) as e:
        raise RemoteError(f"cannot list s3://{bucket}/{prefix}: {e}") from e
    return objects


def _entries(bucket: str, prefix: str, objects: list[S3Object]) -> tuple[list[Entry], Skipped]:
    """The listing as local discovery's walk would see it: hidden folders left out, and a folder
    marker (a key ending in /, as some uploaders write) kept only as an empty graph folder."""
    skipped = Skipped()
    objects = sorted(objects, key=lambda o: o["Key"])
    entries = []
    for i, o in enumerate(objects):
        key = o["Key"]
        below = key[len(prefix):].lstrip("/").split("/")
        if any(part.startswith(".") for part in below[:-1]):
            continue
        path = _path(bucket, key.rstrip("/"))
        if key.endswith("/"):
            follows = i + 1 < len(objects) and objects[i + 1]["Key"].startswith(key)
            if not follows and in_graph_folders(path):
                entries.append(Entry(path, kind="folder"))
            continue
        if str(path) != f"/{bucket}/{key}":
            skipped.add("object key that is not a file path (// or /./ in it)", path)
            continue
        entries.append(Entry(path, o["Size"], o["LastModified"].timestamp()))
    entries.sort(key=lambda e: e.path)
    return entries, skipped


def _head(path: PurePath, size: int = SNIFF_BYTES) -> bytes | None:
    from botocore.exceptions import BotoCoreError, ClientError

    bucket, key = _where(path)
    try:
        data = client().get_object(Bucket=bucket, Key=key, Range=f"bytes=0-{size - 1}")["Body"].read()
    except (BotoCoreError, ClientError):
        return None
    return gunzip_head(data, size) if path.name.endswith(".gz") else data


@contextmanager
def fetched(run: Run) -> Iterator[Run]:
    """The run with its files on this machine's disk: itself for a local run, else a copy of its
    objects in a temporary folder (same relative paths and mtimes), deleted when done."""
    if run.source is None:
        yield run
        return
    if archives.in_archive(run):
        with archives.unpacked(run) as here:
            yield here
        return
    tmp = Path(tempfile.mkdtemp(prefix="iwh-s3-"))


    try:
        client()  # made once, before the threads share it
        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(lambda a: _download(a, under(tmp, a.path)), run.artifacts))
        yield relocated(run, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _download(a: Artifact, dest: Path) -> None:
    from botocore.exceptions import BotoCoreError, ClientError

    if a.kind == "empty_graph_folder":
        dest.mkdir(parents=True, exist_ok=True)
        return
    if a.kind == "unreadable":
        return  # recorded by the assembler, never opened
    dest.parent.mkdir(parents=True, exist_ok=True)
    bucket, key = _where(a.path)
    try:
        body = client().get_object(Bucket=bucket, Key=key)["Body"]
        with open(dest, "wb") as fh:
            for chunk in body.iter_chunks(CHUNK):
                fh.write(chunk)
    except (BotoCoreError, ClientError) as e:
        raise FetchError(f"cannot read {url_of(a.path)}: {e}") from e
    os.utime(dest, (a.mtime, a.mtime))


def object_hash(path: PurePath) -> str | None:
    """An object's content hash as the warehouse records it (`ingest.reading.file_hash`), streamed."""
    from botocore.exceptions import BotoCoreError, ClientError

    hasher = hashlib.blake2b(digest_size=16)
    bucket, key = _where(path)
    try:
        for chunk in client().get_object(Bucket=bucket, Key=key)["Body"].iter_chunks(CHUNK):
            hasher.update(chunk)
    except (BotoCoreError, ClientError):
        return None
    return hasher.hexdigest()


_CLIENTS: dict[int, object] = {}
_SETTINGS: dict[str, str] | None = None  # a Ray task's AWS_* settings, given as its argument


def configure(settings: dict[str, str]) -> None:
    """Read object storage with these AWS_* settings (a Ray task's: its worker's environment has
    none of the ingest's) rather than this process's environment."""
    global _SETTINGS
    if settings != _SETTINGS:
        _SETTINGS = dict(settings)
        _CLIENTS.clear()


def client() -> Any:
    """This process's S3 client (one per process: a client made before a fork is not the child's to use)."""
    pid = os.getpid()
    if pid not in _CLIENTS:
        try:
            import boto3
            from botocore.config import Config
        except ImportError as e:
            raise RemoteError("reading s3:// needs the [s3] extra, which is not installed (boto3): "
                              "pip install 'inductor-warehouse[s3]'") from e
        env = os.environ if _SETTINGS is None else _SETTINGS
        endpoint = s3_endpoint(env)
        config = Config(max_pool_connections=2 * THREADS, retries={"mode": "standard"},
                        s3={"addressing_style": "path"} if endpoint else None)
        keys = {} if _SETTINGS is None else {  # None: boto3's own chain (~/.aws, an instance role)
            "aws_access_key_id": env.get("AWS_ACCESS_KEY_ID"), "aws_secret_access_key": env.get("AWS_SECRET_ACCESS_KEY"),
            "aws_session_token": env.get("AWS_SESSION_TOKEN")}
        _CLIENTS[pid] = boto3.client("s3", region_name=s3_region(env), endpoint_url=endpoint, config=config, **keys)
    return _CLIENTS[pid]
