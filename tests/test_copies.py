"""The same files under other names: a run id is a hash of a run's files, so a copy of a stored run
found in another folder is that run. Ingested under other labels (or another model) it is left out
with a note naming the stored run, whose labels and folder stay (no data lost); `--force` stores it
under the names given. (A copy under the same names is a moved folder: tests/test_order_free.py.)"""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

RUN = FIXTURES / "runs" / "cpu-torch2.14.1" / "mlp"


def _runs(db: str) -> list[tuple]:
    con = reader(db)
    try:
        return con.execute("SELECT run_id, labels ->> 'nightly', source_path, model FROM runs ORDER BY ALL").fetchall()
    finally:
        con.close()


def test_a_copy_under_another_label_keeps_the_stored_run(tmp_path):
    night1, night2 = tmp_path / "night1" / "mlp", tmp_path / "night2" / "mlp"
    shutil.copytree(RUN, night1)
    shutil.copytree(RUN, night2)
    db = str(tmp_path / "w.duckdb")
    first = ingest_paths([night1], db, labels={"nightly": "2026-11-01"})
    assert (first.runs, first.copies) == (1, [])
    [(run_id, night, path, model)] = _runs(db)
    assert (night, path, model) == ("2026-11-01", str(night1), json.loads((RUN / "manifest.json").read_text())["model"])

    second = ingest_paths([night2], db, labels={"nightly": "2026-11-02"})
    assert (second.runs, second.kernels, second.run_ids) == (0, 0, [])
    [copy] = second.copies
    assert (copy.source_path, copy.run_id, copy.stored_path) == (str(night2), run_id, str(night1))
    assert (copy.stored, copy.given) == ({"nightly": "2026-11-01"}, {"nightly": "2026-11-02"})
    assert "not stored" in second.line()
    assert _runs(db) == [(run_id, "2026-11-01", str(night1), "mlp")]

    # the command line says so, and --strict fails on it; the stored run is still there
    res = CliRunner().invoke(cli, ["--db", db, "ingest", str(night2), "--label", "nightly=2026-11-02"])
    assert res.exit_code == 0, res.output
    assert f"holds the same files as run {run_id}, stored from {night1} with nightly=2026-11-01" in res.output
    res = CliRunner().invoke(cli, ["--db", db, "ingest", str(night2), "--label", "nightly=2026-11-02", "--strict"])
    assert res.exit_code == 1 and "not stored" in res.output, res.output
    # a label the stored run lacks is another name too
    other = ingest_paths([night2], db, labels={"nightly": "2026-11-01", "variant": "default"})
    assert other.runs == 0 and [(c.stored, c.given) for c in other.copies] == [({"variant": None}, {"variant": "default"})]
    assert _runs(db) == [(run_id, "2026-11-01", str(night1), "mlp")]

    # --force: stored from the copy, under the names it was given
    forced = ingest_paths([night2], db, labels={"nightly": "2026-11-02"}, force=True)
    assert (forced.runs, forced.copies) == (1, [])
    assert _runs(db) == [(run_id, "2026-11-02", str(night2), "mlp")]


def test_an_unchanged_folder_given_other_labels_says_they_are_not_applied(tmp_path):
    """A folder ingested again unchanged is skipped unread, so labels given to it are not applied: the
    ingest says which run keeps which labels, rather than skipping without a word; labels equal to the
    stored ones, or none given, say nothing; --strict fails on it; --force stores the run with them."""
    night = tmp_path / "night1" / "mlp"
    shutil.copytree(RUN, night)
    db = str(tmp_path / "w.duckdb")
    ingest_paths([night], db, labels={"nightly": "2026-11-01"})
    [(run_id, _, _, _)] = _runs(db)

    assert ingest_paths([night], db, labels={"nightly": "2026-11-01"}).renamed_unchanged == []
    assert ingest_paths([night], db).renamed_unchanged == []
    again = ingest_paths([night], db, labels={"nightly": "2026-11-02"})
    assert (again.runs, again.skipped_runs) == (0, 1)
    [note] = again.renamed_unchanged
    assert (note.run_id, note.stored, note.given) == (run_id, {"nightly": "2026-11-01"}, {"nightly": "2026-11-02"})
    assert "1 stored with other names than given" in again.line()
    assert _runs(db) == [(run_id, "2026-11-01", str(night), json.loads((RUN / "manifest.json").read_text())["model"])]

    result = CliRunner().invoke(cli, ["--db", db, "ingest", str(night), "--label", "nightly=2026-11-02"])
    assert result.exit_code == 0, result.output
    assert f"unchanged since run {run_id}" in result.output and "nightly=2026-11-01" in result.output
    strict = CliRunner().invoke(cli, ["--db", db, "ingest", str(night), "--label", "nightly=2026-11-02", "--strict"])
    assert strict.exit_code != 0 and "not renamed" in strict.output

    forced = ingest_paths([night], db, labels={"nightly": "2026-11-02"}, force=True)
    assert (forced.runs, forced.renamed_unchanged) == (1, [])
    assert [r[1] for r in _runs(db)] == ["2026-11-02"]
