"""`iwh export`: tables and canned-query results as Parquet or CSV, read back with DuckDB."""

from __future__ import annotations

import csv

import duckdb
from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import reader, GPU_TRAIN_RUN


def test_tables_and_a_query_round_trip(tmp_path):
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([GPU_TRAIN_RUN], db)
    out = tmp_path / "out"
    runner = CliRunner()
    r = runner.invoke(cli, ["--db", db, "export", str(out), "--table", "kernels", "--table", "runs"])
    assert r.exit_code == 0, r.output
    with reader(db) as con:  # closed before the next export: one process, one set of settings per file
        for table in ("kernels", "runs"):
            exported = duckdb.sql(f"SELECT count(*) FROM '{out / (table + '.parquet')}'").fetchall()[0][0]
            assert exported == con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] > 0
        kernels = con.execute("SELECT count(*) FROM kernels WHERE generated").fetchone()[0]
    r = runner.invoke(cli, ["--db", db, "export", str(out), "--query", "overview/runs", "--format", "csv"])
    assert r.exit_code == 0, r.output
    with open(out / "overview__runs.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [(row["model"], int(row["kernels"])) for row in rows] == [("mlp", kernels)]
    bad = runner.invoke(cli, ["--db", db, "export", str(out), "--query", "no_such_query"])
    assert bad.exit_code != 0 and "iwh queries" in bad.output
