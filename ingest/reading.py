"""Reading a run's artifacts: each read once, whole or streamed, every byte hashed on the way
(the hashes are the run's identity), and a file that cannot be read recorded as a problem of
the run.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import zlib
from collections.abc import Callable, Iterator
from pathlib import PurePath
from typing import TYPE_CHECKING, BinaryIO

from inductor_warehouse.ingest.listing import Run
from inductor_warehouse.ingest.listing import Artifact
from inductor_warehouse.ingest.rows import IngestErrorRow, Parsed, error_row

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

CHUNK = 1 << 20


def file_hash(path: PurePath) -> str | None:
    """The content hash the warehouse records for an artifact (of its bytes as stored, .gz included)."""
    hasher = hashlib.blake2b(digest_size=16)
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(CHUNK):
                hasher.update(chunk)
    except OSError:
        return None
    return hasher.hexdigest()


class Reader:
    """Reads artifacts whole or line by line, hashing every byte read."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.hashes: dict[str, str] = {}
        self.errors: list[IngestErrorRow] = []
        self.bytes_read = 0

    def error(self, art: Artifact, message: str, line: int | None = None, severity: str = "error",
              kind: str | None = None, path: str | None = None) -> None:
        self.errors.append(error_row(path or self.run.rel(art), kind or art.kind, message, line, severity))

    def read(self, art: Artifact) -> bytes | None:
        """The file's bytes, decompressed when its name ends in .gz; None (an error of the run) when
        it cannot be read."""
        try:
            with open(art.path, "rb") as fh:
                data = fh.read()
        except OSError as e:
            self.error(art, f"cannot read file: {e.strerror or e}")
            return None
        self.bytes_read += len(data)
        self.hashes[self.run.rel(art)] = hashlib.blake2b(data, digest_size=16).hexdigest()
        if art.path.name.endswith(".gz"):  # read as it was before compression, as its sniff was
            try:
                return gzip.decompress(data)
            except (OSError, EOFError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
                self.error(art, f"the compressed file is damaged or cut short, none of it was read: {e}")
                return None
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
    def __init__(self, fh: BinaryIO, hasher: hashlib.blake2b, reader: Reader) -> None:
        self.fh, self.hasher, self.reader = fh, hasher, reader

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        data = self.fh.read(n)
        self.hasher.update(data)
        self.reader.bytes_read += len(data)
        return data

    def readinto(self, b: WriteableBuffer) -> int:
        view = memoryview(b).cast("B")  # io hands a writable byte buffer: a view of it takes a slice
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)


def parse_file(art: Artifact | None, reader: Reader, fn: Callable[[str], Parsed],
               keep: dict[str, str] | None = None) -> Parsed | None:
    """`fn` of the artifact's text; None when there is no artifact or no text to read. `keep`, when
    given, receives the text under the file's name (for a caller that stores the text too)."""
    if art is None:
        return None
    text = reader.text(art)
    if text is None:
        return None
    if keep is not None:
        keep[art.path.name] = text
    return fn(text)
