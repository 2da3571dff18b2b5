"""The schema's SQL files and what they define: `migrations/NNNN_*.sql` (append-only), `views/*.sql`
(each metric once, with its macros), `current.sql` (the tables every migration leaves, which a new
warehouse starts at; `make schema` writes it) and the tables a user sees.

Applying them to a warehouse, in transactions and under its write lock, is the store's
(`store/migrate.py`); this module only reads them and runs them on the connection it is given.
"""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path

import duckdb

# The warehouse's tables, as a user sees them: `runs`, the run-level facts (each row carries run_id),
# and the kernel sources they share. tests/test_warehouse_tables.py checks it against the migrations.
FACT_TABLES = (
    "graphs", "ops", "kernels", "fusions", "layouts", "lineage", "artifacts", "ingest_errors",
    "compilations", "timings", "compile_events", "fusion_decisions", "guards", "cache_events",
    "autotune_choices", "shape_events", "cudagraph_events", "collectives", "op_estimates", "graph_executions",
    "trace_records", "spyre_handles", "spyre_kernel_identities", "spyre_kernel_occurrences", "spyre_compiles",
    "harness_results", "triton_kernels", "graph_texts",
    # no parser's: the loader sums a run's rows into these as it writes them (store/rollups.py)
    "run_rollups", "run_tallies", "run_phases",
)
# no run's rows: HUD's records and suite numbers of each point, kept by the loader as it writes
# (store/rollups.py: fill_harness_points), made again for the points a written run touches
POINT_TABLES = ("harness_records", "harness_point_summaries", "harness_point_runs")
# texts that repeat from run to run, kept once by hash: table -> (hash column, text column)
SHARED_TEXTS = {"kernel_sources": ("source_hash", "source"), "guard_trees": ("tree_hash", "text"),
                "inductor_configs": ("config_hash", "text"), "graph_sources": ("text_hash", "text")}
# of those, the tables keyed by the hash of a normalised text (a kernel's, without its name, paths and
# backend hash): texts that differ share a key, and the least of them is kept, so that what is kept
# depends on which runs were written, never on their order (ingest/write.py). The others' keys are
# md5s of the exact text: one text a key.
LEAST_TEXTS = ("kernel_sources",)
# where each shared text's hash is named: (table, column) of every run's rows that point at it. A text
# none of them names any more (its last run replaced) goes in the transaction that replaced it
SHARED_REFERENCES = {"kernel_sources": (("kernels", "source_hash"),), "guard_trees": (("guards", "tree_hash"),),
                     "inductor_configs": (("run_rollups", "inductor_config_hash"),),
                     "graph_sources": (("graph_texts", "text_hash"),)}
TABLES = ("runs", *FACT_TABLES, *POINT_TABLES, *SHARED_TEXTS)

HERE = Path(__file__).parent
MIGRATIONS = HERE / "migrations"
VIEWS = HERE / "views"
CURRENT = HERE / "current.sql"

_CREATED = re.compile(r"CREATE TABLE (\w+)\(")
_DEFINED = re.compile(r"CREATE OR REPLACE (?:VIEW|MACRO) (\w+)", re.IGNORECASE)


def migration_files() -> list[Path]:
    return sorted(MIGRATIONS.glob("[0-9][0-9][0-9][0-9]_*.sql"))


def view_files() -> list[Path]:
    # Views may depend on views: files are named so that sorted order is dependency order.
    return sorted(VIEWS.glob("*.sql"))


def view_names() -> list[str]:
    """The views and macros the view files define."""
    return [name for path in view_files() for name in _DEFINED.findall(path.read_text())]


def view_texts() -> tuple[list[str], str]:
    """The view files' texts and their digest, which a warehouse keeps in `_views` to tell whether
    its views are this version's."""
    texts = [path.read_text() for path in view_files()]
    return texts, hashlib.blake2b("\0".join(texts).encode(), digest_size=16).hexdigest()


@functools.cache
def current_views_digest() -> str:
    return view_texts()[1]


def current_tables() -> list[tuple[str, str]]:
    """(table, CREATE TABLE statement) of the current schema, by table name (current.sql)."""
    return [(_table_created(ddl), ddl) for ddl in _current_ddl()]


def _table_created(ddl: str) -> str:
    m = _CREATED.match(ddl)
    if m is None:
        raise ValueError(f"current.sql holds a statement that is not a CREATE TABLE: {ddl[:60]}")
    return m[1]


@functools.cache
def _current_ddl() -> tuple[str, ...]:
    text = "\n".join(line for line in CURRENT.read_text().splitlines() if not line.startswith("--"))
    return tuple(ddl.strip() + ";" for ddl in text.split(";\n") if ddl.strip())


def create_current(con: duckdb.DuckDBPyConnection, lake: bool = False) -> list[str]:
    """The current schema on an empty warehouse, in the caller's transaction: its tables, every
    migration recorded as applied, the views; returns the migrations' names. DuckLake keeps no key
    constraints: uniqueness is the loader's (runs replaced whole, texts inserted once, under the
    write lock)."""
    for _, ddl in current_tables():
        con.execute(re.sub(r"\s+PRIMARY KEY\b", "", ddl) if lake else ddl)
    names = [p.stem for p in migration_files()]
    con.execute("INSERT INTO _migrations SELECT unnest(?), now()", [names])
    write_views(con, *view_texts())
    return names


def write_views(con: duckdb.DuckDBPyConnection, texts: list[str], digest: str) -> None:
    """The views and macros, and their digest in `_views`, in the caller's transaction."""
    for text in texts:
        con.execute(text)
    con.execute("DELETE FROM _views")
    con.execute("INSERT INTO _views VALUES (?)", [digest])
