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

from tests.conftest import unpack_harness_captures, unpack_harness_repeats

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
    # the job has no nightly label: on no night (harness_point), never a night of its own mixing others
    assert {r["point"] for r in first["nightly"][0]} == {"1", "2"}
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
        # a key that is not kept is computed (the capture's manifest says harness=performance); a run
        # without the key's label is on no point of it
        assert con.execute("SELECT count(*) FROM harness_models('harness', NULL)").fetchone()[0] == 1
        assert con.execute("SELECT count(*) FROM harness_models('variant', NULL)").fetchone()[0] == 0


def _set_numbers(folder: Path) -> dict:
    """HUD's suite numbers of one result set, computed here from its CSVs alone (csv module): a model
    passes on a passing accuracy and a speedup; geomean speedup and mean compilation latency (the
    performance run's) over the passing models."""
    import csv
    import math

    rows: dict[str, dict[str, dict]] = {"performance": {}, "accuracy": {}}
    for path in folder.rglob("*.csv"):
        kind = "performance" if path.name.endswith("_performance.csv") else "accuracy"
        if path.name.endswith(("_performance.csv", "_accuracy.csv")):
            with open(path, newline="") as fh:
                rows[kind].update({r["name"]: r for r in csv.DictReader(fh)})
    passed = [m for m, r in rows["accuracy"].items() if r["accuracy"] == "pass" and m in rows["performance"]]
    speedups = [float(rows["performance"][m]["speedup"]) for m in passed]
    latencies = [float(rows["performance"][m]["compilation_latency"]) for m in passed]
    return {"workloads": len(set(rows["performance"]) | set(rows["accuracy"])), "passed": len(passed),
            "geomean_speedup": math.prod(speedups) ** (1 / len(speedups)),
            "compilation_latency": sum(latencies) / len(latencies)}


def test_two_result_sets_of_no_known_release_are_never_one_point(tmp_path):
    """The demo's two CI sets (demo/harness-ci-timm-cpu.tar.xz: timm on the CPU under 2.13 and 2.14.1,
    the CSVs alone, `ci` labels, no torch version) beside the captures that compiled the same models.
    Each set is a point of its own, named by its label, with its own numbers (a hand computation from
    its CSVs; before, one NULL point mixed them: geomean 1.093 of 1.148 and 2.105); such a point is no
    step of the release series; by the `ci` label they are a series; a warehouse that kept the mixed
    point has it made again when a writer opens it."""
    import tarfile

    from inductor_warehouse.ingest.load import ingest_paths
    from inductor_warehouse.store.migrate import migrate
    from inductor_warehouse.store.api import Warehouse

    sets = tmp_path / "sets"
    with tarfile.open(Path(__file__).parent.parent / "demo" / "harness-ci-timm-cpu.tar.xz") as tf:
        tf.extractall(sets, filter="data")
    caps = unpack_harness_captures(tmp_path / "caps")
    db = str(tmp_path / "w.duckdb")
    # with the repeats, mobilenetv2_100 has three performance runs a release: a step changes judges
    repeats = unpack_harness_repeats(tmp_path / "repeats")
    assert ingest_paths([sets, caps / "cpu-torch2.13", caps / "cpu-torch2.14.1", repeats], db).errors == 0
    want = {f"ci={name}": _set_numbers(sets / name) for name in ("timm-cpu-2.13", "timm-cpu-2.14.1")}
    assert want["ci=timm-cpu-2.13"]["geomean_speedup"] == pytest.approx(1.1477, abs=1e-4)
    assert want["ci=timm-cpu-2.14.1"]["geomean_speedup"] == pytest.approx(2.1048, abs=1e-4)

    kept = _kept_equals_computed(db)
    with Warehouse(db) as wh:
        summary = {r["point"]: r for r in wh.query("harness/summary").to_dicts()}
        assert set(summary) == {"2.13.0+cpu", "2.14.1+cu130", *want}  # no NULL point
        for point, numbers in want.items():
            row = summary[point]
            assert row["in_series"] is False
            assert (row["workloads"], row["passed_workloads"]) == (numbers["workloads"], numbers["passed"]) == (3, 3)
            assert row["geomean_speedup"] == pytest.approx(numbers["geomean_speedup"], abs=5e-5)
            assert row["compilation_latency_s"] == pytest.approx(numbers["compilation_latency"], abs=5e-4)
        assert summary["2.13.0+cpu"]["in_series"] and summary["2.14.1+cu130"]["in_series"]
        # a set's own point is no step: mobilenetv2_100's steps are from release to release only
        steps = wh.query("harness/model_changes", model="mobilenetv2_100").to_dicts()
        assert steps and {(s["before_point"], s["point"]) for s in steps} == {("2.13.0+cpu", "2.14.1+cu130")}
        models = wh.query("harness/point_models", point="ci=timm-cpu-2.14.1", suite="timm_models").to_dicts()
        assert len(models) == 3 and {m["before_point"] for m in models} == {None}
        latest = wh.query("harness/point_models", suite="timm_models", device="cpu").to_dicts()
        assert {(m["point"], m["before_point"]) for m in latest} == {("2.14.1+cu130", "2.13.0+cpu")}
        # by their label the two sets are a series, the captures on no point of it
        by_ci = wh.query("harness/summary", key="ci").to_dicts()
        assert [(r["point"], r["in_series"]) for r in by_ci] == [("timm-cpu-2.13", True), ("timm-cpu-2.14.1", True)]
        assert by_ci[1]["geomean_speedup"] == pytest.approx(want["ci=timm-cpu-2.14.1"]["geomean_speedup"], abs=5e-5)
        # one measurement a set: no step of a measured number is judged (compare's rule), nothing is flagged
        assert wh.query("harness/model_changes", model="mobilenetv2_100", key="ci").to_dicts() == []
        # the captures' runs that hold harness rows: 2.13's six, 2.14.1's three and its accuracy job, the four repeats
        assert wh.query("dashboard/harness_off_axis", key="ci").to_dicts()[0]["runs"] == 14

    # a warehouse that kept the mixed point (as before): the writer's migrate makes its points again
    with duckdb.connect(db) as con:
        for table in ("harness_records", "harness_point_summaries", "harness_point_runs"):
            con.execute(f"UPDATE {table} SET point = NULL WHERE point LIKE 'ci=%'")
        migrate(con)
        assert con.execute("SELECT count(*) FROM harness_records WHERE point IS NULL").fetchone()[0] == 0
    assert _digits(_kept_equals_computed(db)) == _digits(kept)  # a mean's last bit follows the order it summed in


def _digits(value):
    """`value` with each float to 12 significant digits."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: _digits(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_digits(v) for v in value]
    return value


def test_the_demo_sets_are_made_again_from_the_captures_byte_for_byte(tmp_path):
    """demo/harness-ci-timm-cpu.tar.xz is what `python -m demo.harness_sets` makes from the harness
    captures: the same members with the same bytes (each CSV and JSON record the capture's own, no
    trace or debug tree), and the same archive bytes on a rebuild."""
    import tarfile

    from demo.harness_sets import OUT, build, members

    def read(archive: Path) -> dict[str, bytes]:
        with tarfile.open(archive) as tf:
            return {m.name: tf.extractfile(m).read() for m in tf.getmembers() if m.isfile()}

    made = build(tmp_path / "again.tar.xz")
    assert read(made) == read(OUT) == members()
    assert build(tmp_path / "twice.tar.xz").read_bytes() == made.read_bytes()
    with tarfile.open(Path(__file__).parent / "fixtures" / "captures" / "harness-timm.tar.xz") as tf:
        capture = {m.name: tf.extractfile(m).read() for m in tf.getmembers() if m.isfile()}
    sets = read(OUT)
    csvs = sorted(n for n in sets if n.endswith(".csv"))
    assert len(csvs) == 16 and not any("/trace/" in n or "torch_compile_debug" in n for n in sets)
    for name in csvs:
        release = {"timm-cpu-2.13": "cpu-torch2.13", "timm-cpu-2.14.1": "cpu-torch2.14.1"}[name.split("/")[0]]
        assert sets[name] == capture[release + name[name.index("/"):]], name
    assert json.loads(sets["timm-cpu-2.13/manifest.json"]) == {"ci": "timm-cpu-2.13"}


def test_the_kept_suite_numbers_do_not_depend_on_ingest_order(tmp_path):
    """HUD's suite means are sums of floats: the same rows ingested in another order, in other
    batches, with other --jobs, keep the same numbers to the last bit (each in workload order), and
    those are the means of the harness's own CSV values."""
    import csv
    import math

    from inductor_warehouse.ingest.load import ingest_paths
    from tests.conftest import unpack_harness_repeats

    caps, reps = unpack_harness_captures(tmp_path / "caps"), unpack_harness_repeats(tmp_path / "reps")
    folders = [caps / "cpu-torch2.13", caps / "cpu-torch2.14.1", reps / "cpu-torch2.13", reps / "cpu-torch2.14.1"]
    at_once, piecewise = str(tmp_path / "a.duckdb"), str(tmp_path / "b.duckdb")
    ingest_paths(folders, at_once, jobs=1)
    for folder in [caps / "cpu-torch2.14.1", reps / "cpu-torch2.14.1", caps / "cpu-torch2.13" / "performance" / "repvgg_a2",
                   reps / "cpu-torch2.13", caps / "cpu-torch2.13"]:
        ingest_paths([folder], piecewise, jobs=2)
    sql = ("SELECT point, backend, geomean_speedup::VARCHAR, compilation_latency::VARCHAR, compression_ratio::VARCHAR, "
           "dynamo_peak_mem::VARCHAR, geomean_speedup_all::VARCHAR FROM harness_point_summaries ORDER BY ALL")
    kept = []
    for db in (at_once, piecewise):
        con = duckdb.connect(db, read_only=True)
        kept.append(con.execute(sql).fetchall())
        con.close()
    assert kept[0] == kept[1]
    # the independent reading: each model's median compression ratio of the 2.13 performance CSVs
    # (three samples of mobilenetv2_100, one of each other model), their mean
    ratios: dict[str, list[float]] = {}
    for path in sorted((caps / "cpu-torch2.13").rglob("*_performance.csv")) + sorted(
            (reps / "cpu-torch2.13").rglob("*_performance.csv")):
        for row in csv.DictReader(path.open()):
            ratios.setdefault(row["name"], []).append(float(row["compression_ratio"]))
    medians = [sorted(v)[(len(v) - 1) // 2] for v in ratios.values()]
    assert sorted(ratios) == ["deit_tiny_patch16_224.fb_in1k", "mobilenetv2_100", "repvgg_a2"]
    assert [len(v) for _, v in sorted(ratios.items())] == [1, 3, 1]
    stored = [float(r[4]) for r in kept[0] if r[0] == "2.13.0+cpu" and r[1] == "inductor"]
    assert stored and math.isclose(stored[0], math.fsum(medians) / 3, rel_tol=1e-15)
    # a warehouse that kept numbers summed in another order gets them made again by migration 0051
    from inductor_warehouse.store.writer import Writer

    con = duckdb.connect(piecewise)
    con.execute("UPDATE harness_point_summaries SET compression_ratio = 0")
    con.execute("DELETE FROM _migrations WHERE name = '0051_harness_means_in_workload_order'")
    con.close()
    with Writer(piecewise) as writer, writer.session():
        pass
    con = duckdb.connect(piecewise, read_only=True)
    assert con.execute(sql).fetchall() == kept[0]
    con.close()
