"""`iwh ingest` names the files it skipped and why: a few of each reason with the count of the rest,
every one with --verbose, every one in --format json; the summary still ends the output."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.discover import discover
from tests.conftest import FIXTURES

RUN = FIXTURES / "runs" / "cpu-torch2.14.1" / "mlp"
# files no reader takes, with names of their own: what a user keeps beside a run
STRAYS = ["notes.txt", "plot.png", "requirements.lock", "train.sh", "weights.bin"]


def _folder(tmp_path):
    root = tmp_path / "captures"
    shutil.copytree(RUN, root / "mlp")
    for i, name in enumerate(STRAYS):
        (root / "mlp" / name).write_bytes(b"\x00\x01 not an artifact %d" % i)
    # a harness JSON record with no CSV beside it: recognised, yet says nothing alone
    records = root / "records"
    records.mkdir()
    (records / "inductor_timm_models_float32_inference_cpu_performance.json").write_text(
        json.dumps({"benchmark": {"name": "TorchInductor"}, "model": {"name": "resnet50"},
                    "metric": {"name": "speedup", "benchmark_values": [1.2]}}) + "\n")
    return root


def _strays(root):
    return [str(root / "mlp" / n) for n in STRAYS]


def test_discovery_keeps_which_files_it_skipped_and_why(tmp_path):
    root = _folder(tmp_path)
    skipped = discover([root]).skipped
    unrecognised = [p for p in skipped.paths["unrecognised file"] if p in _strays(root)]
    assert unrecognised == _strays(root)  # every stray, in listing order
    assert skipped["unrecognised file"] == len(skipped.paths["unrecognised file"])
    assert {k: len(v) for k, v in skipped.paths.items()} == dict(skipped)


def test_ingest_names_a_few_skipped_files_and_says_how_to_see_all(tmp_path, monkeypatch):
    root = _folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "wh.duckdb")
    res = CliRunner().invoke(cli, ["ingest", str(root), "--db", db])
    assert res.exit_code == 0, res.output
    err = res.stderr.splitlines()
    total = sum(discover([root]).skipped.values())
    assert err[0] == f"skipped {total} files (not errors; `--verbose` names every one, `--format json` lists them):"
    named = [line.strip() for line in err if line.startswith("    ") and not line.strip().startswith("...")]
    unrecognised = discover([root]).skipped.paths["unrecognised file"]
    # three of each reason, named below the working folder as typed, different names first
    assert len(named) == 3 + 1
    assert all(n.startswith("captures/") for n in named)
    assert len({n.rsplit("/", 1)[-1] for n in named[:3]}) == 3
    assert f"    ... and {len(unrecognised) - 3} more" in err
    assert f"  unrecognised file x{len(unrecognised)} (not a trace log, debug tree" in res.stderr
    assert "  harness records with no CSV beside them x1 (" in res.stderr
    assert "captures/records/inductor_timm_models_float32_inference_cpu_performance.json" in named
    assert res.stdout.startswith("ingested 1 run,")

    verbose = CliRunner().invoke(cli, ["ingest", str(root), "--db", db, "--verbose", "--force"])
    listed = [line.strip() for line in verbose.stderr.splitlines() if line.startswith("    ")]
    assert [p for p in listed if p.startswith("captures/mlp/") and "/" not in p[len("captures/mlp/"):]] == \
        [f"captures/mlp/{n}" for n in STRAYS]
    assert len(listed) == total and "more" not in verbose.stderr and "--verbose" not in verbose.stderr


def test_json_lists_every_skipped_file(tmp_path):
    root = _folder(tmp_path)
    res = CliRunner().invoke(cli, ["ingest", str(root), "--db", str(tmp_path / "wh.duckdb"), "--format", "json"])
    out = json.loads(res.stdout)
    assert set(_strays(root)) <= set(out["skipped_paths"]["unrecognised file"])
    assert out["skipped_paths"]["harness records with no CSV beside them"] == [
        str(root / "records" / "inductor_timm_models_float32_inference_cpu_performance.json")]
    assert {k: len(v) for k, v in out["skipped_paths"].items()} == out["skipped_files"]


def test_the_summary_line_tells_warnings_from_errors(tmp_path):
    """A file of warnings alone reads "0 errors and N warnings", never "N errors"; --strict fails on both."""
    name = "inductor_torchbench_float32_training_cuda_performance_compilation_metrics.csv"
    src = FIXTURES / "harness" / "compilation_metrics" / "davidberard98-dynamo_benchmark_results" / \
        "day_326_22_11_22_performance_float32_285" / name
    (tmp_path / "nightly").mkdir()
    shutil.copy(src, tmp_path / "nightly" / name)
    db = str(tmp_path / "wh.duckdb")
    res = CliRunner().invoke(cli, ["ingest", str(tmp_path / "nightly"), "--db", db, "--format", "json"])
    out = json.loads(res.stdout)
    severities = [e["severity"] for e in out["error_rows"]]
    assert severities == ["warning"] and (out["errors"], out["warnings"]) == (1, 1)
    res = CliRunner().invoke(cli, ["ingest", str(tmp_path / "nightly"), "--db", db, "--force", "--strict"])
    assert ", 0 errors and 1 warning in " in res.stdout
    assert res.exit_code == 1 and "1 ingest problem recorded (--strict fails on errors and warnings alike)" in res.stderr


def test_the_warehouse_s_own_files_under_the_paths_are_not_called_skipped(tmp_path, monkeypatch):
    """`iwh ingest .` beside ./warehouse.duckdb: the database, its WAL and its lock files are the
    ingest's own, not files to report; a stray beside them still is."""
    shutil.copytree(RUN, tmp_path / "mlp")
    (tmp_path / "notes.txt").write_text("a stray\n")
    monkeypatch.chdir(tmp_path)
    for _ in range(2):  # the second time the warehouse and its lock files are there before discovery
        res = CliRunner().invoke(cli, ["ingest", ".", "--force", "--format", "json"])
        assert res.exit_code == 0, res.output
        summary = json.loads(res.stdout)
        named = [p for paths in summary["skipped_paths"].values() for p in paths]
        assert [p for p in named if "warehouse.duckdb" in p] == []
        assert any(p.endswith("notes.txt") for p in named), named
    assert (tmp_path / "warehouse.duckdb").exists() and (tmp_path / "warehouse.duckdb.iwh-writer").exists()
