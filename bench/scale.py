"""Warehouses of 100, 1,000 and 10,000 runs: the ingested corpus (67 GPU + 15 CPU runs)
replicated in SQL. Copy 0 is the corpus as ingested; copy c >= 1 of a run gets a new run id, a
nightly compiler version of its release (`2.11.0.dev20260102+cu130`: c days after 2026-01-01), a
start time c days later and its own source path. Kernel sources and guard trees are shared by
hash, as in a real warehouse, so they are not copied; rollups are copied with their runs."""

from __future__ import annotations

import math
import time
from pathlib import Path

from bench import corpus
from bench.ingest import _fresh, ingest
from inductor_warehouse.schema.ddl import FACT_TABLES, SHARED_TEXTS
from inductor_warehouse.store.opening import connect

BASE = corpus.WORK / "base.duckdb"
COPIES_PER_COMMIT = 24


def build_base() -> dict:
    """The GPU archive and the three CPU corpora, ingested fresh with --jobs 2."""
    _fresh(BASE)
    proc, info = ingest([corpus.gpu_runs(), *corpus.cpu_runs()], BASE, 2)
    return {"runs": info["runs"], "wall_s": proc.wall_s}


def build(n_runs: int) -> tuple[Path, dict]:
    db = corpus.WORK / f"wh_{n_runs}.duckdb"
    _fresh(db)
    t0 = time.perf_counter()
    con = connect(db)  # migrations and views, as `iwh` makes them
    try:
        con.execute("SET memory_limit = '2GB'")
        con.execute(f"ATTACH '{BASE}' AS base (READ_ONLY)")
        base_runs = con.execute("SELECT count(*) FROM base.runs").fetchone()[0]
        copies = math.ceil(n_runs / base_runs)
        con.execute("""
            CREATE TEMP TABLE copy_map AS
            SELECT run_id AS old_id, c,
                   CASE WHEN c = 0 THEN run_id ELSE left(md5(run_id || ':' || c), 16) END AS new_id,
                   c * ? + rn AS run_key  -- in the order the copies are written, as the loader numbers runs
            FROM (SELECT run_id, row_number() OVER (ORDER BY run_id) AS rn FROM base.runs),
                 range(?) t(c)
            WHERE c * ? + rn <= ?""", [base_runs, copies, base_runs, n_runs])
        for table in SHARED_TEXTS:  # kept once by hash, as the loader keeps them
            con.execute(f"INSERT INTO {table} SELECT * FROM base.{table}")
        # several copies a statement and a transaction: DuckDB writes a large insert straight to
        # the file, not through the WAL, in parallel when row order need not be kept; a bounded
        # number keeps memory bounded. The rows of one statement's runs mix, so a row group spans
        # the run keys of its statement, not of a few runs as the loader's do: lookups by run_key
        # read a statement's row groups here (1/50 of a table at 100,000 runs), fewer in a real one
        con.execute("SET preserve_insertion_order = false")
        for first in range(0, copies, COPIES_PER_COMMIT):
            last = min(first + COPIES_PER_COMMIT, copies) - 1
            con.execute("BEGIN")
            con.execute("""
                INSERT INTO runs
                SELECT r.* REPLACE (
                    m.new_id AS run_id,
                    m.run_key AS run_key,
                    CASE WHEN m.c = 0 THEN r.compiler_version
                         ELSE regexp_replace(r.compiler_version, '^([0-9]+\\.[0-9]+\\.[0-9]+)',
                                             '\\1.dev' || strftime(DATE '2026-01-01' + m.c::INTEGER, '%Y%m%d'))
                    END AS compiler_version,
                    r.started_at + to_days(m.c::INTEGER) AS started_at,
                    CASE WHEN m.c = 0 THEN r.source_path ELSE r.source_path || '#copy' || m.c END AS source_path)
                FROM base.runs r JOIN copy_map m ON r.run_id = m.old_id AND m.c BETWEEN ? AND ?""", [first, last])
            for table in FACT_TABLES:
                con.execute(f"""
                    INSERT INTO {table}
                    SELECT t.* REPLACE (m.new_id AS run_id, m.run_key AS run_key)
                    FROM base.{table} t JOIN copy_map m ON t.run_id = m.old_id AND m.c BETWEEN ? AND ?""",
                            [first, last])
            con.execute("COMMIT")
        con.execute("DETACH base")
        con.execute("CHECKPOINT")
        rows = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("runs",) + FACT_TABLES}
    finally:
        con.close()
    return db, {"runs": rows["runs"], "rows": sum(rows.values()), "build_s": time.perf_counter() - t0,
                "file_mb": db.stat().st_size / 1e6}
