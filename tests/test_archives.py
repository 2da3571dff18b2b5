"""CI's artifact archives ingested as downloaded: `test-reports-test-<job>-<shard>-<shards>-<runner>_<id>.zip`
holding `test/test-reports/*.csv` and the JSON records beside them (PyTorch's
tools/stats/upload_dynamo_perf_stats.py reads them so). The archives are made here of this project's
real harness CSVs, named as CI names them; their rows are checked against the CSVs read with
Python's csv module."""

from __future__ import annotations

import csv
import io
import zipfile
from pathlib import Path

import pytest

HERE = Path(__file__).parent / "fixtures" / "harness"
MEMBERS = {  # member in the archive -> the fixture it holds
    "test/test-reports/inductor_timm_models_float32_inference_cpu_performance.csv": "cpu-2.13-deit_tiny-performance.csv",
    "test/test-reports/inductor_timm_models_float32_inference_cpu_performance.json": "cpu-2.13-deit_tiny-performance.json",
    "test/test-reports/inductor_timm_models_float32_inference_cpu_accuracy.csv": "cpu-2.14.1-job-accuracy.csv",
    "test/test-reports/aot_eager_timm_models_float32_inference_cpu_accuracy.csv": "cpu-2.13-repvgg_a2-accuracy.csv",
}
NAME = "test-reports-test-inductor_timm_perf-1-2-linux.12xlarge_41234567.zip"


def _archive(folder: Path, name: str = NAME) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, fixture in MEMBERS.items():
            zf.writestr(member, (HERE / fixture).read_bytes())
    return path


def _sql(db: str, text: str) -> list[dict]:
    from inductor_warehouse.store.api import Warehouse

    with Warehouse(db) as wh:
        return wh.sql(text).to_dicts()


def test_an_archive_is_ingested_as_downloaded(tmp_path):
    from inductor_warehouse.ingest.load import ingest_paths

    archive = _archive(tmp_path / "downloads")
    db = str(tmp_path / "w.duckdb")
    summary = ingest_paths([archive], db)
    assert (summary.runs, summary.errors) == (1, 0)
    rows = _sql(db, "SELECT h.file, h.kind, h.backend, h.suite, h.model, h.speedup, h.accuracy, r.source_path "
                    "FROM harness_results h JOIN runs r USING (run_id) ORDER BY h.file, h.line")
    want = []
    for member, fixture in sorted(MEMBERS.items()):
        if member.endswith(".csv"):
            for row in csv.DictReader(io.StringIO((HERE / fixture).read_text())):
                want.append((member.rsplit("/", 1)[-1], row["name"], row.get("speedup"), row.get("accuracy")))
    got = [(r["file"].rsplit("/", 1)[-1], r["model"], None if r["speedup"] is None else f"{r['speedup']:.6f}",
            r["accuracy"]) for r in rows]
    assert got == want
    # each file's backend from its CI name: aot_eager's rows apart from inductor's
    assert {(r["file"].rsplit("/", 1)[-1].split("_timm")[0], r["backend"]) for r in rows} == {
        ("inductor", "inductor"), ("aot_eager", "aot_eager")}
    # the run is where it lies: the folder of the CSVs inside the archive
    assert {r["source_path"] for r in rows} == {f"{archive.resolve()}/test/test-reports"}
    # as downloaded again, unchanged: skipped
    again = ingest_paths([archive], db)
    assert (again.runs, again.skipped_runs) == (0, 1)


def test_a_folder_of_archives_and_a_damaged_one(tmp_path):
    """A folder of downloads: each archive's runs (two archives of the same files are one run, its
    content); a file named .zip that is none is said and skipped, the others kept."""
    from inductor_warehouse.ingest.load import ingest_paths

    folder = tmp_path / "downloads"
    _archive(folder)
    _archive(folder / "later", NAME.replace("41234567", "41234999"))
    (folder / "test-reports-broken.zip").write_bytes(b"PK\x03\x04 not really a zip")
    db = str(tmp_path / "w.duckdb")
    summary = ingest_paths([folder], db)
    assert summary.errors == 0 and summary.skipped_files == {"unrecognised file": 1}
    # the one named is the damaged download, never the archives read member by member
    assert summary.skipped_files.paths == {"unrecognised file": [str(folder / "test-reports-broken.zip")]}
    # two archives of the same files: the same run (content), stored once
    assert _sql(db, "SELECT count(*) AS n FROM runs")[0]["n"] == 1
    assert _sql(db, "SELECT count(*) AS n FROM harness_results")[0]["n"] == sum(
        len(list(csv.DictReader(io.StringIO((HERE / f).read_text())))) for m, f in MEMBERS.items() if m.endswith(".csv"))


@pytest.mark.parametrize("member", ["../escape.csv", "/abs.csv"])
def test_members_outside_their_archive_are_never_written(tmp_path, member):
    from inductor_warehouse.ingest.load import ingest_paths

    path = tmp_path / "evil.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(member, (HERE / "cpu-2.13-repvgg_a2-accuracy.csv").read_bytes())
    db = str(tmp_path / "w.duckdb")
    summary = ingest_paths([path], db)
    assert summary.runs == 0 and not (tmp_path.parent / "escape.csv").exists()
