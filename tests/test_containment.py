"""One bad run never sinks a batch: a run whose rows the warehouse refuses (any DuckDB error)
becomes an `ingest_errors` row and is not written; every other run of the batch lands; the summary
counts it; `iwh ingest` exits 0 unless --strict; the next ingest tries that run again."""

from __future__ import annotations

import json

from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.parsers import output_code
from tests.conftest import FIXTURES, reader

RUNS = FIXTURES / "runs"  # five real runs: 2.6.0 mlp, 2.13 transformer, 2.14.1 mlp, two GPU runs


def test_a_run_the_warehouse_refuses_is_an_error_and_its_batch_lands(tmp_path, monkeypatch):
    real = output_code.parse_output_code

    def a_parser_bug_for_the_transformer(text):
        parsed = real(text)
        if "cpp_fused_native_layer_norm" in text:  # only the 2.13 transformer's graphs have this kernel
            parsed.rows["kernels"][0]["kernel_name"] = None  # kernels.kernel_name is NOT NULL
        return parsed

    monkeypatch.setattr(output_code, "parse_output_code", a_parser_bug_for_the_transformer)
    db = str(tmp_path / "wh.duckdb")
    res = CliRunner().invoke(cli, ["ingest", str(RUNS), "--db", db, "--format", "json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    runs = len(list(RUNS.glob("*/*/manifest.json")))
    assert (summary["runs"], summary["refused_runs"]) == (runs - 1, 1)
    [refusal] = [e for e in summary["error_rows"] if e["kind"] == "load"]
    assert refusal["severity"] == "error" and refusal["source_path"].endswith("cpu-torch2.13/transformer")
    assert "NOT NULL constraint failed: kernels.kernel_name" in refusal["message"]
    with reader(db) as con:
        models = sorted(con.execute("SELECT model || '@' || compiler_version FROM runs").fetchall())
        assert models == [("mlp@2.11.0+cu130",), ("mlp@2.11.0+cu130",), ("mlp@2.14.1+cu130",), ("mlp@2.6.0+cu124",)]
        # nothing of the refused run stays but the error row, which names it
        refused = refusal["run_id"]
        for table in ("graphs", "kernels", "ops", "artifacts", "compilations"):
            assert con.execute(f"SELECT count(*) FROM {table} WHERE run_id = ?", [refused]).fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM ingest_errors WHERE run_id = ? AND kind = 'load'",
                           [refused]).fetchone()[0] == 1
    strict = CliRunner().invoke(cli, ["ingest", str(RUNS / "cpu-torch2.13"), "--db", db, "--strict"])
    assert strict.exit_code == 1 and "1 ingest problem recorded (--strict" in strict.output
    # the bug fixed: the refused run is not "unchanged" (its files were never recorded), so it lands
    monkeypatch.setattr(output_code, "parse_output_code", real)
    again = CliRunner().invoke(cli, ["ingest", str(RUNS), "--db", db, "--format", "json"])
    summary = json.loads(again.output)
    assert (summary["runs"], summary["skipped_runs"], summary["refused_runs"]) == (1, runs - 1, 0)
    with reader(db) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == runs
        assert con.execute("SELECT count(*) FROM ingest_errors WHERE kind = 'load'").fetchone()[0] == 0
