"""`iwh capture` and the zoo runner.

Tests marked `torch` run real torch.compile programs with a separate torch interpreter: env
IWH_TEST_TORCH_PYTHON, else .venv-torch-2.13/bin/python (made with `pip install torch==2.13.0`);
they skip when neither exists. The others use this interpreter with plain Python commands.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from inductor_warehouse.cli.commands.capture import capture_command
from inductor_warehouse.ingest.capture_command import capture
from tests.conftest import reader, FIXTURES, ROOT

CAPTURE_FIXTURES = FIXTURES / "capture"


@pytest.fixture(scope="module")
def torch_python() -> str:
    python = os.environ.get("IWH_TEST_TORCH_PYTHON") or str(ROOT / ".venv-torch-2.13" / "bin" / "python")
    if not Path(python).exists():
        pytest.skip(f"no torch interpreter at {python}: python3 -m venv .venv-torch-2.13 && "
                    ".venv-torch-2.13/bin/pip install torch==2.13.0")
    return python


def _installed_torch(python: str) -> str:
    """The torch distribution's version, read from its metadata (capture asks torch.__version__)."""
    code = "import importlib.metadata as m; print(m.version('torch'))"
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def _graph_folders(out: Path) -> list[Path]:
    return sorted(p.parent for p in out.glob("torch_compile_debug/run_*/torchinductor/*/output_code.py"))


@pytest.fixture(scope="module")
def tiny_capture(torch_python, tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny")
    result = capture([torch_python, str(CAPTURE_FIXTURES / "tiny.py")], out, "tiny",
                     {"mode": "infer", "suite": "tests"}, echo=False)
    return out, result


@pytest.mark.torch
def test_capture_tiny_compile_writes_every_artifact(tiny_capture, torch_python):
    out, result = tiny_capture
    manifest = json.loads((out / "manifest.json").read_text())
    assert result.exit_code == 0 and manifest["exit_code"] == 0
    assert manifest["model"] == "tiny"
    assert manifest["mode"] == "infer" and manifest["suite"] == "tests"
    assert manifest["torch"].startswith(_installed_torch(torch_python))
    assert manifest["command"].endswith("tests/fixtures/capture/tiny.py")
    assert manifest["wall_s"] > 0
    # tiny.py compiles one function with no graph break: exactly one Inductor graph folder
    assert [p.name for p in _graph_folders(out)] == ["model__0_inference_0.0"]
    traces = list((out / "trace").glob("dedicated_log_torch_trace_*.log"))
    assert len(traces) == 1 and traces[0].stat().st_size > 0
    assert "[__fusion]" in (out / "torch_logs.txt").read_text()  # TORCH_LOGS reached the process
    assert (out / "stdout.txt").read_text().strip() == "torch.Size([8])"


@pytest.mark.torch
def test_capture_of_failing_script_keeps_artifacts_and_exit_code(torch_python, tmp_path):
    result = capture([torch_python, str(CAPTURE_FIXTURES / "raises.py")], tmp_path, None, {}, echo=False)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert result.exit_code == 1 and manifest["exit_code"] == 1
    assert manifest["model"] == "raises"  # from the script's name, as no --model was given
    assert "RuntimeError: planted failure after compiling" in (tmp_path / "torch_logs.txt").read_text()
    assert len(_graph_folders(tmp_path)) == 1  # compiled before it raised


@pytest.mark.torch
def test_tiny_capture_ingests_with_model_and_labels(tiny_capture, tmp_path):
    ingest_paths = pytest.importorskip("inductor_warehouse.ingest.load").ingest_paths
    out, _ = tiny_capture
    db = str(tmp_path / "wh.duckdb")
    summary = ingest_paths([out], db, model="tiny", labels={"mode": "infer", "suite": "tests"})
    assert summary.errors == 0
    expected_kernels = len(re.findall(r"^cpp_fused_\w+ = ", _output_code(out), re.M))
    with reader(db) as con:
        (run_id, model, labels), = con.execute("SELECT run_id, model, labels FROM runs").fetchall()
        graphs = con.execute("SELECT count(*) FROM graphs WHERE run_id = ?", [run_id]).fetchone()[0]
        kernels = con.execute(
            "SELECT count(*) FROM kernels WHERE run_id = ? AND generated", [run_id]).fetchone()[0]
    assert model == "tiny"
    assert json.loads(labels)["suite"] == "tests" and json.loads(labels)["mode"] == "infer"
    assert graphs == 1
    assert kernels == expected_kernels > 0


def _output_code(out: Path) -> str:
    return (_graph_folders(out)[0] / "output_code.py").read_text()


def test_cli_propagates_exit_code_and_records_labels(tmp_path):
    script = "import sys; print('to stdout'); print('to stderr', file=sys.stderr); sys.exit(3)"
    out = tmp_path / "run"
    result = CliRunner().invoke(
        capture_command,
        ["--out", str(out), "--model", "m", "--label", "mode=train", "--label", "dtype=bf16", "--no-ingest",
         "--", sys.executable, "-c", script],
    )
    assert result.exit_code == 3, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["model"], manifest["mode"], manifest["dtype"], manifest["exit_code"]) == ("m", "train", "bf16", 3)
    assert "torch" not in manifest  # this interpreter has no torch
    assert (out / "stdout.txt").read_text() == "to stdout\n"
    assert (out / "torch_logs.txt").read_text() == "to stderr\n"


def test_cli_rejects_label_without_value(tmp_path):
    result = CliRunner().invoke(capture_command, ["--out", str(tmp_path), "--label", "mode", "--", "true"])
    assert result.exit_code == 2 and "key=value" in result.output


def test_capture_sets_artifact_environment_and_profile_path(tmp_path):
    keys = ["TORCH_COMPILE_DEBUG", "TORCH_COMPILE_DEBUG_DIR", "TORCH_TRACE", "INDUCTOR_PROVENANCE",
            "TORCHINDUCTOR_FORCE_DISABLE_CACHES", "TORCH_LOGS", "IWH_PROFILE"]
    script = f"import json, os; print(json.dumps({{k: os.environ.get(k) for k in {keys!r}}}))"
    result = CliRunner().invoke(capture_command, ["--out", str(tmp_path), "--profile", "--no-ingest", "--",
                                                  sys.executable, "-c", script])
    assert result.exit_code == 0, result.output
    seen = json.loads((tmp_path / "stdout.txt").read_text())
    assert seen == {
        "TORCH_COMPILE_DEBUG": "1", "TORCH_COMPILE_DEBUG_DIR": str(tmp_path), "TORCH_TRACE": str(tmp_path / "trace"),
        "INDUCTOR_PROVENANCE": "1", "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1",
        "TORCH_LOGS": "graph_breaks,recompiles,fusion,cudagraphs", "IWH_PROFILE": str(tmp_path / "profile.json"),
    }


def test_run_facts_join_the_manifest_but_not_over_capture_keys(tmp_path):
    script = ("import json, os; json.dump({'device_name': 'NVIDIA H200', 'ok': False, 'exit_code': 99,"
              " 'nested': [1]}, open(os.environ['IWH_RUN_FACTS'], 'w'))")
    result = capture([sys.executable, "-c", script], tmp_path, "m", {"mode": "infer"}, echo=False)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["device_name"] == "NVIDIA H200" and manifest["ok"] is False
    assert manifest["exit_code"] == 0 == result.exit_code
    assert "nested" not in manifest
    assert not (tmp_path / "run_facts.json").exists()  # folded into the manifest


def test_timeout_kills_and_records(tmp_path):
    result = capture([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path, "slow", {},
                     echo=False, timeout_s=1)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert result.timed_out and manifest["timed_out"] is True and manifest["exit_code"] == 124
    assert manifest["wall_s"] < 30


def test_command_that_cannot_start_is_still_a_run(tmp_path):
    result = capture([str(tmp_path / "no-such-program")], tmp_path / "out", "x", {}, echo=False)
    assert result.exit_code == 127
    assert "cannot start" in (tmp_path / "out" / "torch_logs.txt").read_text()


@pytest.mark.torch
def test_zoo_run_captures_labels_profile_and_ground_truth(torch_python, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "zoo.run", "--python", torch_python, "--out", str(tmp_path / "{device}-torch{torch}"),
         "--run", "mlp__infer__fp32__default", "--profile", "--jobs", "1"],
        cwd=ROOT, capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    public_version = _installed_torch(torch_python).split("+")[0]  # "2.13.0+cpu" -> "2.13.0"
    run = tmp_path / f"cpu-torch{public_version}" / "mlp__infer__fp32__default"
    manifest = json.loads((run / "manifest.json").read_text())
    labels = {k: manifest[k] for k in ("model", "mode", "dtype", "variant", "device", "ok")}
    assert labels == {"model": "mlp", "mode": "infer", "dtype": "fp32", "variant": "default", "device": "cpu",
                      "ok": True}
    assert any(e.get("ph") == "X" for e in json.loads((run / "profile.json").read_text())["traceEvents"])
    # Inductor's own counter, read in-process by the worker
    assert json.loads((run / "ground_truth.json").read_text())["generated_kernel_count"] > 0
    assert [p.name for p in _graph_folders(run)] == ["model__0_inference_0.0"]


def test_bundled_demo_corpus_ingests_cleanly_and_shows_a_release_change(tmp_path):
    """`make demo`'s corpus: every archive in demo/ (and the captures it borrows from tests/fixtures)
    ingests with no ingest error, one run a manifest of demo/'s own archives."""
    import tarfile

    from demo.build_demo import unpack
    from inductor_warehouse.ingest.load import ingest_paths

    archives = sorted((ROOT / "demo").glob("*.tar.xz"))
    manifests = sum(m.name.endswith("/manifest.json") for a in archives for m in tarfile.open(a).getmembers())
    folders = unpack(tmp_path / "corpus")
    db = str(tmp_path / "wh.duckdb")
    summary = ingest_paths(folders, db, jobs=2)
    assert summary.errors == 0
    with reader(db) as con:
        assert con.execute("SELECT count(*) FROM ingest_errors").fetchone()[0] == 0
        own = [f"%/corpus/{a.name.removesuffix('.tar.xz')}/%" for a in archives]
        assert con.execute("SELECT count(*) FROM runs WHERE " + " OR ".join(["source_path LIKE ?"] * len(own)),
                           own).fetchone()[0] == manifests
        devices = {r[0] for r in con.execute("SELECT DISTINCT device FROM runs").fetchall()}
        kernels = dict(con.execute(
            "SELECT compiler_version, kernel_count FROM run_metrics "
            "WHERE model = 'transformer' AND (labels ->> 'mode') IS NULL").fetchall())
    assert devices == {"cpu", "cuda"}

    def counted(version: str) -> int:  # generated C++ kernels defined in the run's output_code.py files
        run = f"*/cpu-torch{version}/transformer"
        codes = (tmp_path / "corpus").glob(f"{run}/torch_compile_debug/*/torchinductor/*/output_code.py")
        return sum(len(re.findall(r"^cpp_fused_\w+ = async_compile", p.read_text(), re.M)) for p in codes)

    assert (counted("2.6.0"), counted("2.13")) == (14, 10)
    assert (kernels["2.6.0+cu124"], kernels["2.13.0+cpu"]) == (14, 10)


def test_capture_with_caches_on_shares_the_cache_folder_and_says_so(tmp_path):
    script = ("import json, os; print(json.dumps({k: os.environ.get(k) for k in "
              "('TORCHINDUCTOR_FORCE_DISABLE_CACHES', 'TORCHINDUCTOR_CACHE_DIR')}))")
    cache = tmp_path / "shared-cache"
    for name in ("cold", "warm"):
        result = CliRunner().invoke(capture_command, ["--out", str(tmp_path / name), "--cache", "on", "--cache-dir",
                                                      str(cache), "--label", f"cache={name}", "--no-ingest", "--",
                                                      sys.executable, "-c", script])
        assert result.exit_code == 0, result.output
        seen = json.loads((tmp_path / name / "stdout.txt").read_text())
        assert seen == {"TORCHINDUCTOR_FORCE_DISABLE_CACHES": None, "TORCHINDUCTOR_CACHE_DIR": str(cache.resolve())}
        manifest = json.loads((tmp_path / name / "manifest.json").read_text())
        assert (manifest["caches"], manifest["cache"]) == ("on", name)
    off = CliRunner().invoke(capture_command, ["--out", str(tmp_path / "off"), "--no-ingest", "--", sys.executable,
                                               "-c", script])
    assert off.exit_code == 0
    assert json.loads((tmp_path / "off" / "stdout.txt").read_text())["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] == "1"
    assert json.loads((tmp_path / "off" / "manifest.json").read_text())["caches"] == "off"


def test_capture_with_caches_on_keeps_the_triton_metadata_the_command_added(tmp_path):
    """With caches on, Triton's cache stays in Inductor's cache folder (`<cache>/triton/<device>/`): the
    metadata of the entries a command adds (here a real Triton 3.8 entry, which the command copies in
    as a compile would) is kept in the run folder and ingested; a warm run that adds none keeps none."""
    from inductor_warehouse.ingest.load import ingest_paths
    from inductor_warehouse.store.api import Warehouse

    entry = next((Path(__file__).parent / "fixtures" / "triton_cache").glob("*/triton_poi_fused_add_0.json")).parent
    script = ("import os, shutil, sys; dest = os.path.join(os.environ['TORCHINDUCTOR_CACHE_DIR'], 'triton', '0', "
              "os.path.basename(sys.argv[1]));\nif not os.path.exists(dest): shutil.copytree(sys.argv[1], dest)")
    cache = tmp_path / "cache"
    for name in ("cold", "warm"):
        result = CliRunner().invoke(capture_command, ["--out", str(tmp_path / name), "--cache", "on", "--cache-dir",
                                                      str(cache), "--no-ingest", "--", sys.executable, "-c", script,
                                                      str(entry)])
        assert result.exit_code == 0, result.output
    kept = sorted(p.relative_to(tmp_path / "cold" / "triton_cache").as_posix()
                  for p in (tmp_path / "cold" / "triton_cache").rglob("*"))
    assert kept == [entry.name, f"{entry.name}/triton_poi_fused_add_0.json"]
    assert not (tmp_path / "warm" / "triton_cache").exists()
    db = str(tmp_path / "w.duckdb")
    ingest_paths([tmp_path / "cold"], db)
    want = json.loads((entry / "triton_poi_fused_add_0.json").read_text())
    with Warehouse(db) as wh:
        rows = wh.sql("SELECT kernel_name, num_warps, shared_bytes FROM triton_kernels "
                      "WHERE source = 'triton_cache'").to_dicts()
    assert rows == [{"kernel_name": "triton_poi_fused_add_0", "num_warps": want["num_warps"], "shared_bytes": want["shared"]}]


def test_two_captures_of_one_model_at_once_keep_two_runs(tmp_path):
    """Started together (the same second): each gets a folder of its own and both runs are ingested."""
    script = "import os, time; time.sleep(0.5); print(os.getpid())"
    iwh = [sys.executable, "-m", "inductor_warehouse"]
    db = tmp_path / "wh.duckdb"
    procs = [subprocess.Popen([*iwh, "--db", str(db), "capture", "--model", "m", "--no-ingest", "--",
                               sys.executable, "-c", script], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    folders = sorted((tmp_path / "captures").iterdir())
    assert len(folders) == 2 and all(f.name.startswith("m-") for f in folders)
    pids = {(f / "stdout.txt").read_text().strip() for f in folders}
    assert len(pids) == 2  # each folder holds its own process's output
    ingest_paths = pytest.importorskip("inductor_warehouse.ingest.load").ingest_paths
    ingest_paths(folders, str(db))
    with reader(str(db)) as con:
        assert con.execute("SELECT count(*) FROM runs WHERE model = 'm'").fetchone()[0] == 2


def test_capture_never_writes_into_a_folder_that_holds_files(tmp_path):
    (tmp_path / "old.txt").write_text("an earlier run")
    result = CliRunner().invoke(capture_command, ["--out", str(tmp_path), "--no-ingest", "--", "true"])
    assert result.exit_code == 2 and "already holds files" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.txt"]


def test_default_folder_is_new_whatever_the_clock(tmp_path):
    from inductor_warehouse.ingest.capture_command import new_folder

    base = tmp_path / "captures" / "m-20260101-000000"
    made = [new_folder(base) for _ in range(3)]
    assert [p.name for p in made] == ["m-20260101-000000", "m-20260101-000000-2", "m-20260101-000000-3"]
