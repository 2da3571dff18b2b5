"""Every table's rows, for every fixture and corpus log, as a checksum kept in a golden file: a
change to how the ingest reads or writes (its framing, JSON decoding, hand-over or writer) must
leave every stored row as it was.

A table's checksum is its row count and the md5 of its rows' md5s in sorted order (so the order
rows were written in does not count), each row as DuckDB prints it, without the columns that say
when or how fast it was written, with the folder the inputs were unpacked in taken out of its
text, and floating-point numbers to 9 significant digits (a rollup's sum depends on the order it
adds its rows in). The golden is an ingest in one process; one with parse workers, which hand
runs over in the order they end, must store the same (of kernel texts that normalise alike,
`kernel_sources` keeps the least, whatever the order: tests/test_order_free.py). Its hashes alone
have a line of their own too.
`pytest --update-golden tests/test_table_checksums.py` rewrites the file; a table a change did not
mean to touch must keep its line.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT, corpus_path, gpu_trace_logs, reader, unpack_cpu_corpora, unpacked_corpus

GOLDEN = ROOT / "tests" / "golden" / "table_checksums.json"
# when and how fast a row was written, in which order, and the files' times on this disk
VOLATILE = {"ingested_at", "ingest_seconds", "run_key"}
VOLATILE_OF = {"artifacts": {"mtime"}}
ORDER_FREE_SOURCES = "kernel_sources.source_hash"
CAPTURES = sorted((FIXTURES / "captures").glob("*.tar.xz"))


def table_checksums(db: str, root: Path) -> dict[str, str]:
    """{table: "rows:md5"} of every table of the warehouse but its bookkeeping (`_*`), and of
    kernel_sources' hashes alone."""
    out = {}
    con = reader(db)
    try:
        tables = [t for (t,) in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
            "AND table_type = 'BASE TABLE' AND table_catalog = current_database() ORDER BY 1").fetchall()
            if not t.startswith("_")]
        for table in tables:
            columns = [(c, t) for c, t in con.execute(
                "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'main' "
                "AND table_catalog = current_database() AND table_name = ? ORDER BY ordinal_position",
                [table]).fetchall() if c not in VOLATILE | VOLATILE_OF.get(table, set())]
            out[table] = _checksum(con, table, columns, root)
            if table == "kernel_sources":
                out[ORDER_FREE_SOURCES] = _checksum(con, table, [("source_hash", "VARCHAR")], root)
    finally:
        con.close()
    return out


def _checksum(con, table: str, columns: list[tuple[str, str]], root: Path) -> str:
    listed = ", ".join(f"printf('%.9g', \"{c}\") AS \"{c}\"" if t in ("DOUBLE", "FLOAT") else f'"{c}"'
                       for c, t in columns)
    n, digest = con.execute(
        f"SELECT count(*), md5(coalesce(string_agg(h, '' ORDER BY h), '')) FROM "
        f"(SELECT md5(replace(CAST(r AS VARCHAR), ?, '<root>')) AS h FROM (SELECT {listed} FROM {table}) r)",
        [str(root)]).fetchone()
    return f"{n}:{digest}"


def _check(name: str, paths: list[Path], root: Path, tmp_path: Path, request) -> None:
    from inductor_warehouse.ingest.load import ingest_paths

    db = str(tmp_path / f"{name}.duckdb")
    for jobs in (1, 2):  # in one process, and handed over from parse workers
        Path(db).unlink(missing_ok=True)
        ingest_paths(paths, db, jobs=jobs)
        got = table_checksums(db, root)
        if request.config.getoption("--update-golden"):
            golden = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
            golden[name] = got
            GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
            return
        golden = json.loads(GOLDEN.read_text()).get(name)
        if golden is None:
            pytest.fail(f"no checksums for {name} in {GOLDEN.name}: run pytest --update-golden on this file")
        # a table that a later migration added and the golden does not have yet is not compared
        differ = {t: (golden[t], got.get(t)) for t in golden if got.get(t) != golden[t]}
        assert not differ, f"{name}, --jobs {jobs}: tables whose rows changed (golden, now): {differ}"


def test_fixtures_tables_unchanged(tmp_path, request):
    """Every run of tests/fixtures (48 runs: debug trees, trace logs of every era, broken and killed
    runs, profiles, Spyre specs, harness files, a Triton cache)."""
    root = tmp_path / "in"
    shutil.copytree(FIXTURES, root / "fixtures")
    _check("fixtures", [root / "fixtures"], root, tmp_path, request)


def test_captures_tables_unchanged(tmp_path, request):
    """The captures of tests/fixtures/captures (caches, production modes, the benchmark harness)
    and the three CPU corpora bundled with the demo."""
    import tarfile

    root = tmp_path / "in"
    for archive in CAPTURES:
        with tarfile.open(archive) as tf:
            tf.extractall(root / archive.name.removesuffix(".tar.xz"), filter="data")
    unpack_cpu_corpora(root)
    _check("captures", sorted(root.iterdir()), root, tmp_path, request)


@pytest.mark.corpus
def test_tlparse_logs_tables_unchanged(tmp_path, request):
    """tlparse's own test logs (../shared/corpus/tlparse-logs)."""
    logs = corpus_path("tlparse-logs")
    _check("tlparse_logs", [logs], logs.parent, tmp_path, request)


@pytest.mark.corpus
def test_gpu_corpus_tables_unchanged(tmp_path, request):
    """The 67 GPU runs whole, debug trees, profiles and TORCH_LOGS included."""
    runs = unpacked_corpus("gpu-h200-torch2.11.tar.xz")
    _check("gpu_corpus", [runs], runs, tmp_path, request)


@pytest.mark.corpus
def test_gpu_corpus_logs_tables_unchanged(tmp_path, request):
    """The 67 GPU runs' TORCH_TRACE logs alone, as the bench's trace section ingests them (every
    record of a log is read there: no debug tree holds its graphs)."""
    root = gpu_trace_logs(tmp_path)
    _check("gpu_corpus_logs", [root], root, tmp_path, request)
