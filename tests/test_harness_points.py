"""HUD's records and suite numbers the loader keeps for the points of harness_point_keys()
(harness_records, harness_point_summaries: read in milliseconds where computing them over a year of
nightlies took seconds) always equal what the macros compute from every row: after an ingest, after
compiles that link a job's rows arrive later, after a run is replaced, and in a warehouse written
before migration 0034."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.conftest import unpack_harness_captures

KEYS = ("compiler", "nightly")
ORDER = "ORDER BY ALL"


def _dicts(con, sql: str) -> list[dict]:
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _kept_equals_computed(db: str) -> dict:
    """{key: (records, summaries)} kept, after checking each equals its computation."""
    from inductor_warehouse.store.opening import connect

    con = connect(db, read_only=True)
    out = {}
    try:
        for key in KEYS:
            kept = _dicts(con, f"SELECT * EXCLUDE (run_ids) FROM harness_models('{key}', NULL) {ORDER}")
            made = _dicts(con, f"SELECT * EXCLUDE (run_ids) FROM harness_models_of('{key}', NULL, NULL, NULL) {ORDER}")
            assert kept == made, key
            summary = _dicts(con, f"SELECT * FROM harness_summary('{key}', NULL) {ORDER}")
            computed = _dicts(con, f"SELECT * FROM harness_summary_of('{key}', NULL, NULL, NULL) {ORDER}")
            assert summary == computed, key
            out[key] = (kept, summary)
    finally:
        con.close()
    return out


def _nightly(src: Path, dest: Path, night: str) -> Path:
    shutil.copytree(src, dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    (dest / "manifest.json").write_text(json.dumps(manifest | {"nightly": night}))
    return dest


def test_kept_points_follow_ingests_late_compiles_and_replaced_runs(tmp_path):
    from inductor_warehouse.ingest.load import ingest_paths

    caps = unpack_harness_captures(tmp_path / "caps")
    db = str(tmp_path / "w.duckdb")
    # two nights of the 2.13 captures, and the 2.14.1 job's CSVs alone: its compiles come later
    nights = [_nightly(caps / "cpu-torch2.13" / "performance" / "repvgg_a2", tmp_path / "n1" / "perf", "1"),
              _nightly(caps / "cpu-torch2.13" / "accuracy" / "repvgg_a2", tmp_path / "n1" / "acc", "1"),
              _nightly(caps / "cpu-torch2.13" / "performance" / "mobilenetv2_100", tmp_path / "n2" / "perf", "2")]
    job = tmp_path / "job"
    shutil.copytree(caps / "cpu-torch2.14.1" / "accuracy-job", job,
                    ignore=lambda folder, names: [n for n in names if n in ("trace", "torch_compile_debug")])
    assert ingest_paths([*nights, job], db).errors == 0
    first = _kept_equals_computed(db)
    assert {r["point"] for r in first["nightly"][0]} == {"1", "2", None}  # the job has no nightly label
    job_models = {"deit_tiny_patch16_224.fb_in1k", "mobilenetv2_100", "repvgg_a2"}
    unlinked = [r for r in first["compiler"][0] if r["model"] in job_models and r["accuracy_samples"]
                and r["accuracy_run_id"] is None]
    assert len(unlinked) == 3  # the job's rows, no compile of theirs yet

    # the job's compiles arrive: its rows link to them, their records name them
    shutil.rmtree(job)
    shutil.copytree(caps / "cpu-torch2.14.1" / "accuracy-job", job)
    assert ingest_paths([job], db).errors == 0
    second = _kept_equals_computed(db)
    with duckdb.connect(db, read_only=True) as con:
        linked = con.execute("SELECT count(*) FROM harness_records WHERE point_key = 'compiler' "
                             "AND accuracy_run_id IS NOT NULL AND model IN ('deit_tiny_patch16_224.fb_in1k', "
                             "'mobilenetv2_100', 'repvgg_a2') AND compiler_version LIKE '2.14.1%'").fetchone()[0]
    assert linked == 3 and second != first

    # night 2 is run again with another speedup: its old records go, the new ones come
    csv_path = tmp_path / "n2" / "perf" / "inductor_timm_models_float32_inference_cpu_performance.csv"
    lines = csv_path.read_text().splitlines()
    fields = lines[1].split(",")
    fields[3] = "0.500000"
    csv_path.write_text("\n".join([lines[0], ",".join(fields)]) + "\n")
    assert ingest_paths([tmp_path / "n2"], db).runs == 1  # the same folder: its run replaced
    third = _kept_equals_computed(db)
    speedups = {r["speedup"] for r in third["nightly"][0] if r["point"] == "2"}
    assert 0.5 in speedups and float(lines[1].split(",")[3]) not in speedups


def test_a_warehouse_before_0034_gets_its_workloads_and_points(tmp_path):
    from inductor_warehouse.ingest.load import ingest_paths
    from inductor_warehouse.store.migrate import migrate
    from inductor_warehouse.store.opening import connect
    from tests.test_warehouse_tables import as_before

    caps = unpack_harness_captures(tmp_path / "caps")
    db = str(tmp_path / "w.duckdb")
    assert ingest_paths([caps / "cpu-torch2.13"], db).errors == 0
    want = _kept_equals_computed(db)
    con = connect(db)
    workloads = con.execute("SELECT run_id, file, line, workload FROM harness_results ORDER BY ALL").fetchall()
    as_before(con, "0034")
    con.close()
    con = duckdb.connect(db)
    try:
        assert [a[:4] for a in migrate(con)] == ["0034"]
        assert con.execute("SELECT run_id, file, line, workload FROM harness_results ORDER BY ALL").fetchall() == workloads
    finally:
        con.close()
    assert _kept_equals_computed(db) == want


@pytest.mark.parametrize("key", KEYS)
def test_the_kept_numbers_are_read_not_computed(tmp_path, key):
    """harness_models and harness_summary read the kept tables for these keys: emptied behind the
    loader's back, they say so (nothing), where the computation still has every row."""
    from inductor_warehouse.ingest.load import ingest_paths

    caps = unpack_harness_captures(tmp_path / "caps")
    db = str(tmp_path / "w.duckdb")
    assert ingest_paths([_nightly(caps / "cpu-torch2.13" / "performance" / "repvgg_a2", tmp_path / "n", "1")],
                        db).errors == 0
    with duckdb.connect(db) as con:
        con.execute("DELETE FROM harness_records")
        con.execute("DELETE FROM harness_point_summaries")
        assert con.execute(f"SELECT count(*) FROM harness_models('{key}', NULL)").fetchone()[0] == 0
        assert con.execute(f"SELECT count(*) FROM harness_summary('{key}', NULL)").fetchone()[0] == 0
        assert con.execute(f"SELECT count(*) FROM harness_models_of('{key}', NULL, NULL, NULL)").fetchone()[0] == 1
        # a key that is not kept is computed
        assert con.execute("SELECT count(*) FROM harness_models('variant', NULL)").fetchone()[0] == 1
