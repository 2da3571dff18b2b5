"""The row contract: each table's declared row type (ingest/rows.py) names the table's columns in
schema/current.sql, every row the real parsers and the assembler make over the fixtures has only
declared keys, and the loader refuses a row with a key that is no column."""

from __future__ import annotations

import duckdb
import pytest
from tests.conftest import FIXTURES, ROOT, unpack_cpu_corpora, unpack_gpu_captures, unpack_harness_captures

from inductor_warehouse.ingest.assemble import assemble
from inductor_warehouse.ingest.convert import RowKeyError
from inductor_warehouse.ingest.discover import discover
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.ingest.rows import RIDING, ROW_TYPES
from inductor_warehouse.ingest.sources import SOURCES
from inductor_warehouse.schema.ddl import FACT_TABLES, SHARED_TEXTS

# set by the loader, not by the rows' makers (but a run's own id, and an error row's, which may have none)
LOADER_KEYS = {"run_id", "run_key"}
OWN_ID = {"runs", "ingest_errors"}
# filled by the loader from rows of other tables
ROLLUPS = {"run_rollups", "run_tallies", "run_phases"}


def _schema_columns() -> dict[str, set[str]]:
    """The columns of every table, as schema/current.sql creates them."""
    con = duckdb.connect()
    con.execute((ROOT / "schema" / "current.sql").read_text())
    columns: dict[str, set[str]] = {}
    for table, column in con.execute("SELECT table_name, column_name FROM information_schema.columns").fetchall():
        columns.setdefault(table, set()).add(column)
    return columns


def _declared(table: str) -> set[str]:
    return set(ROW_TYPES[table].__annotations__)


def test_every_declared_key_is_a_column_and_every_column_declared():
    columns = _schema_columns()
    made = {"runs", *FACT_TABLES} - ROLLUPS
    assert set(ROW_TYPES) == made
    for table in ROW_TYPES:
        stray = _declared(table) - columns[table] - RIDING.get(table, set())
        assert not stray, f"{table} declares {sorted(stray)}, no column of it in schema/current.sql"
        loaders = {"run_key"} if table in OWN_ID else LOADER_KEYS
        missing = columns[table] - _declared(table) - loaders
        assert not missing, f"{table} has columns {sorted(missing)} its row type does not declare"


def _fixture_runs(tmp_path) -> list:
    """Every run of the fixtures: the small ones, the CPU corpora, the GPU and harness captures."""
    roots = [FIXTURES / d for d in ("debug_tree", "runs", "torch_trace", "torch_logs", "profiler", "spyre",
                                    "spyre_provenance", "harness", "triton_cache", "broken", "killed")]
    roots += [*unpack_cpu_corpora(tmp_path), unpack_gpu_captures(tmp_path), unpack_harness_captures(tmp_path)]
    return discover(roots).runs


def test_every_row_the_parsers_make_has_only_declared_keys(tmp_path):
    seen: dict[str, int] = {}
    stray: dict[tuple[str, str], str] = {}

    def check(table: str, rows: list[dict], where: str) -> None:
        if table in SHARED_TEXTS:
            return
        assert table in ROW_TYPES, f"{where} makes rows of {table!r}, a table with no declared row type"
        declared = (_declared(table) - RIDING.get(table, set())) | (LOADER_KEYS if table in OWN_ID else set())
        for row in rows:
            for key in row.keys() - declared:
                stray.setdefault((table, key), where)
        seen[table] = seen.get(table, 0) + len(rows)

    runs = _fixture_runs(tmp_path)
    assert len(runs) > 80
    fed: set[tuple[str, str]] = set()
    for run in runs:
        def spill(rows: dict[str, list[dict]], run=run) -> None:
            for table, part in rows.items():
                check(table, part, f"{run.source_path} (spilled)")

        data = assemble(run, spill=spill)
        fed |= data.fed
        for table, rows in data.tables.items():
            check(table, rows, run.source_path)
        check("runs", [data.run], run.source_path)
        check("artifacts", data.artifacts, run.source_path)
        check("ingest_errors", data.errors, run.source_path)
    # each register entry names the tables its rows land in, and only those
    declared_tables = {s.kind: s.tables for s in SOURCES}
    undeclared = sorted((kind, table) for kind, table in fed if table not in declared_tables.get(kind, ()))
    assert not undeclared, f"rows of these (kind, table) pairs, which the register does not declare: {undeclared}"
    # the fixtures reach the sources that make most rows, so a table an entry forgot shows here
    assert {"fx_graph", "fusion_ir", "output_code", "torch_trace", "profiler", "torch_logs", "spyre",
            "spyre_provenance", "harness"} <= {kind for kind, _ in fed}
    for s in SOURCES:
        assert s.tables <= set(ROW_TYPES), f"{s.kind} names tables that have no row type: {sorted(s.tables - set(ROW_TYPES))}"
    assert not stray, "keys no row type declares: " + "; ".join(f"{t}.{k} (from {w})" for (t, k), w in stray.items())
    # the fixtures reach the tables of every source kind, so a stray key of any parser shows here
    assert {"graphs", "ops", "kernels", "fusions", "layouts", "lineage", "compilations", "timings", "guards",
            "cache_events", "autotune_choices", "spyre_handles", "harness_results", "triton_kernels"} <= set(seen)


def test_the_loader_refuses_a_row_with_a_key_that_is_no_column(tmp_path, monkeypatch):
    """A key no column holds is a defect of the code that made the row (keys are spelled by code,
    never by input): the ingest stops, and none of the run is written."""
    from inductor_warehouse.ingest import load

    real = load.assemble

    def misspelled(*a, **kw):
        data = real(*a, **kw)
        data.tables["kernels"][0]["kernel_nmae"] = data.tables["kernels"][0].pop("kernel_name")
        return data

    monkeypatch.setattr(load, "assemble", misspelled)
    db = str(tmp_path / "wh.duckdb")
    with pytest.raises(RowKeyError, match=r"kernels carry \['kernel_nmae'\]"):
        ingest_paths([FIXTURES / "runs" / "cpu-torch2.13"], db)
    con = duckdb.connect(db, read_only=True)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    con.close()
