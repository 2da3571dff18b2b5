"""The unchanged-run check: which discovered runs need reading at all.

Same paths, sizes and mtimes as recorded in `artifacts` for the same folder: unchanged, nothing
read. Same paths and sizes but new mtimes (a copy, a checkout, a touch): the files are hashed, and
equal content hashes still skip the run without parsing it; the new mtimes are returned for the
writer to record (`ingest/write.py`), so the next ingest needs no hashing.
"""

from __future__ import annotations

import duckdb

from inductor_warehouse.ingest.reading import file_hash
from inductor_warehouse.ingest.listing import Run
from inductor_warehouse.ingest.archives import in_archive, member_hash
from inductor_warehouse.ingest.remote import object_hash


def changed(con: duckdb.DuckDBPyConnection, runs: list[Run]) -> tuple[list[Run], list[tuple[float, str, str]]]:
    """The runs whose files differ from what the warehouse recorded for the same folder, and the
    (new mtime, run id, path) of the files of unchanged runs that were touched."""
    if not runs:
        return runs, []
    known: dict[str, dict[str, tuple[int, float, str | None, str]]] = {}  # (size, mtime, content hash, run id)
    rows = con.execute(
        "SELECT r.source_path, r.run_id, a.path, a.bytes, a.mtime, a.content_hash "
        "FROM runs r JOIN artifacts a USING (run_id) WHERE r.source_path IN (SELECT unnest(?))",
        [[r.source_path for r in runs]],
    ).fetchall()
    for src, run_id, path, size, mtime, digest in rows:
        known.setdefault(src, {})[path] = (size, mtime, digest, run_id)
    out: list[Run] = []
    touched: list[tuple[float, str, str]] = []
    for r in runs:
        before = known.get(r.source_path)
        now = {r.rel(a): a for a in r.artifacts}
        if before is None or set(before) != set(now) or any(before[p][0] != a.size for p, a in now.items()):
            out.append(r)
        elif any(before[p][1] != a.mtime for p, a in now.items()):
            digest = file_hash if r.source is None else member_hash if in_archive(r) else object_hash
            if all(a.kind == "empty_graph_folder" or before[p][2] == digest(a.path) for p, a in now.items()):
                touched.extend((a.mtime, before[p][3], p) for p, a in now.items())
            else:
                out.append(r)
    return out, touched
