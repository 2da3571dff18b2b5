"""Shared test helpers: where fixtures and the optional large corpus are."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SHARED_CORPUS = Path(os.environ.get("IWH_SHARED_CORPUS", ROOT.parent / "shared" / "corpus"))
# `iwh` as a process of its own, from this checkout, whatever the PATH holds
IWH = [sys.executable, "-c", "from inductor_warehouse.cli.main import main; main()"]
# columns that say when, how fast or in which order runs were written, not what they hold: two
# ingests of the same runs are equal without them
VOLATILE = {"ingested_at", "ingest_seconds", "run_key"}


@pytest.fixture(scope="session", autouse=True)
def _cache_folder(tmp_path_factory):
    """The empty warehouse new ones are copied from (store/file.py) kept in a folder of the test
    session's, not the user's cache; `iwh` processes the tests start inherit it."""
    before = os.environ.get("IWH_CACHE_DIR")
    os.environ["IWH_CACHE_DIR"] = str(tmp_path_factory.mktemp("iwh-cache"))
    yield
    if before is None:
        os.environ.pop("IWH_CACHE_DIR", None)
    else:
        os.environ["IWH_CACHE_DIR"] = before


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", help="rewrite golden CSVs instead of comparing")


def corpus_path(*parts: str) -> Path:
    """A path inside ../shared/corpus, or skip the test when the corpus is absent."""
    p = SHARED_CORPUS.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"needs {p} (the shared corpus); absent on this machine")
    return p


CORPUS_CACHE = ROOT / ".corpus-cache"
# The three CPU corpora of ../shared/corpus, bundled with the demo (so tests need no ../shared)
CPU_CORPUS_ARCHIVES = [ROOT / "demo" / name for name in
                       ("cpu-torch2.6.0.tar.xz", "shared-cpu-torch2.13.tar.xz", "shared-cpu-torch2.14.1.tar.xz")]
GPU_TRAIN_RUN = FIXTURES / "runs" / "gpu-torch2.11" / "mlp__train__fp32__default"
BROKEN_TRACE = FIXTURES / "broken" / "tlparse_corrupted_json"


def fixture_files(pattern: str) -> list[Path]:
    """Files named `pattern` in the debug-tree fixtures and the whole-run fixtures."""
    return sorted(FIXTURES.joinpath("debug_tree").rglob(pattern)) + sorted(FIXTURES.joinpath("runs").rglob(pattern))


def unpack(archive: Path, root: Path) -> Path:
    """A fixture archive unpacked under root (a test's temporary folder), which it returns."""
    with tarfile.open(archive) as tf:
        tf.extractall(root, filter="data")
    return root


def unpack_cpu_corpora(root: Path) -> list[Path]:
    """The bundled CPU corpora (2.6.0, 2.13, 2.14.1; five models each) unpacked under root."""
    out = []
    for archive in CPU_CORPUS_ARCHIVES:
        dest = root / archive.name.removesuffix(".tar.xz")
        with tarfile.open(archive) as tf:
            tf.extractall(dest, filter="data")
        out.append(dest)
    return out


GPU_CAPTURES = FIXTURES / "captures" / "gpu-torch2.11-caches.tar.xz"


def unpack_gpu_captures(root: Path) -> Path:
    """The GPU captures with Inductor's caches on (torch 2.11, one H100): `autotune/{cold,warm}/` of
    four max-autotune inference runs, `train/{cold,warm}/` of two training runs."""
    dest = root / "gpu-captures"
    with tarfile.open(GPU_CAPTURES) as tf:
        tf.extractall(dest, filter="data")
    return dest


def build_fixture_warehouse(root: Path) -> str:
    """The shared fixture warehouse: the 15 CPU corpus runs, one profiled GPU training run (profiler
    times, fusion decisions), a trace log with corrupted JSON (ingest errors), and the GPU mlp runs
    captured cold and warm, training and max-autotune inference (caches, autotuning): 21 runs."""
    from inductor_warehouse.ingest.load import ingest_paths

    db = str(root / "wh.duckdb")
    captures = unpack_gpu_captures(root)
    mlp = [captures / part / temp / name for part, name in (("train", "mlp__train__fp32__default"),
                                                          ("autotune", "mlp__infer__bf16__max_autotune"))
           for temp in ("cold", "warm")]
    summary = ingest_paths([*unpack_cpu_corpora(root), GPU_TRAIN_RUN, BROKEN_TRACE, *mlp], db)
    assert summary.runs == 21, summary.line()
    return db


HARNESS_CAPTURES = FIXTURES / "captures" / "harness-timm.tar.xz"
HARNESS_EXPECTED = FIXTURES / "harness" / "cpu_inductor_timm_inference.csv"
HARNESS_REPEATS = FIXTURES / "captures" / "harness-timm-repeats.tar.xz"


def unpack_harness_captures(root: Path) -> Path:
    """PyTorch's benchmark harness under iwh capture, one model a capture (tests/fixtures/SOURCES.md):
    `cpu-torch2.13/{performance,accuracy}/<model>`, `cpu-torch2.14.1/performance/<model>`,
    `cpu-torch2.14.1/accuracy-job` (the harness's own loop: a process a model, one folder), and
    `gpu-torch2.11/{default,single_config}/{performance,accuracy}/<model>` (one H100; single_config:
    `--inductor-config triton.autotune_pointwise=False`); timm models mobilenetv2_100,
    deit_tiny_patch16_224.fb_in1k and repvgg_a2 (CPU only)."""
    dest = root / "harness-timm"
    with tarfile.open(HARNESS_CAPTURES) as tf:
        tf.extractall(dest, filter="data")
    return dest


def unpack_harness_repeats(root: Path) -> Path:
    """Two more performance captures of mobilenetv2_100 a release (tests/fixtures/SOURCES.md):
    `cpu-torch2.13/performance-{2,3}/mobilenetv2_100`, `cpu-torch2.14.1/performance-{2,3}/...`, so
    that with harness-timm's each release has three samples of that workload."""
    dest = root / "harness-timm-repeats"
    with tarfile.open(HARNESS_REPEATS) as tf:
        tf.extractall(dest, filter="data")
    return dest


def build_harness_warehouse(root: Path) -> str:
    """The harness captures (19 runs: 18 compiles and the 2.14.1 job's harness files) and CI's
    expected values for CPU timm inference (one more run, its CSV alone)."""
    from inductor_warehouse.ingest.load import ingest_paths

    db = str(root / "harness.duckdb")
    expected = root / "ci_expected_accuracy"
    expected.mkdir()
    shutil.copy(HARNESS_EXPECTED, expected)
    summary = ingest_paths([unpack_harness_captures(root), expected], db)
    assert summary.runs == 20 and summary.errors == 0, summary.line()
    return db


def unpacked_corpus(archive: str) -> Path:
    """One of the corpus archives, unpacked once into .corpus-cache/ and shared by every test
    process (the GPU archive is 500 MB unpacked); skip when the corpus is absent."""
    src = corpus_path(archive)
    dest = CORPUS_CACHE / archive.replace(".tar.xz", "")
    CORPUS_CACHE.mkdir(exist_ok=True)
    with open(CORPUS_CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test workers wait for the first unpack
        done = dest / ".unpacked"
        if not done.exists():
            shutil.rmtree(dest, ignore_errors=True)
            dest.mkdir(parents=True)
            with tarfile.open(src) as tf:
                tf.extractall(dest, filter="data")
            done.write_text(str(src.stat().st_mtime))
    return dest



def gpu_trace_logs(tmp_path: Path) -> Path:
    """The GPU corpus's TORCH_TRACE logs alone, as the bench's trace section ingests them: a folder a
    run holding a link to its log (no debug tree beside it, so every record of a log is read)."""
    runs = unpacked_corpus("gpu-h200-torch2.11.tar.xz")
    root = tmp_path / "traces"
    for log in sorted(runs.rglob("trace/*.log")):
        (root / log.parent.parent.name).mkdir(parents=True)
        (root / log.parent.parent.name / "x.log").symlink_to(log)
    return root

def reader(db: str):
    """A connection to read a warehouse the way iwh's readers do (read-only, locked down): in one
    process, DuckDB shares a file among connections only when they open it with the same settings."""
    from inductor_warehouse.store.opening import connect

    return connect(db, read_only=True, lockdown=True)


def held_by_another_process(db: str) -> bool:
    """Whether another process finds the warehouse file locked: its writer's open fails at once."""
    code = ("import duckdb, sys\ntry:\n    duckdb.connect(sys.argv[1]).close()\nexcept duckdb.IOException:\n"
            "    print('locked')\n")
    out = subprocess.run([sys.executable, "-c", code, db], capture_output=True, text=True, timeout=60)
    return out.stdout.strip() == "locked"


def without_run_keys(con) -> None:
    """Make a warehouse as one written before migration 0011: no run_key anywhere, the migration not
    recorded (the next writer's open applies it)."""
    from inductor_warehouse.schema.ddl import FACT_TABLES

    for table in ("runs", *FACT_TABLES):
        con.execute(f"ALTER TABLE {table} DROP COLUMN run_key")
    con.execute("DELETE FROM _migrations WHERE name = '0011_run_key'")


def rows_off_their_runs_key(con, table: str) -> int:
    """Rows of `table` whose run_key is not their run's."""
    return con.execute(f"""SELECT count(*) FROM {table} t JOIN runs r USING (run_id)
                           WHERE t.run_key IS DISTINCT FROM r.run_key""").fetchone()[0]


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    stat = fh.read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def alive(pid: int) -> bool:
    """Running (a zombie, dead but not reaped by a container's init, is not)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.fixture
def db(tmp_path) -> str:
    return str(tmp_path / "wh.duckdb")


def gpu_corpus() -> Path:
    """The 67 GPU run folders of the shared corpus (skips when absent)."""
    return unpacked_corpus("gpu-h200-torch2.11.tar.xz") / "gpu-h200-torch2.11"


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL 15 server for this test session (skips with the reason when the package is absent)."""
    from tests.servers import Postgres

    why = Postgres.missing()
    if why:
        pytest.skip(why)
    server = Postgres().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def s3():
    """moto's S3-compatible server for this test session."""
    from tests.servers import S3

    server = S3().start()
    yield server
    server.stop()


def chromium_spans(log: Path) -> list[dict]:
    """A TORCH_TRACE log's chromium spans, read apart from the parser: each chromium_event payload (the
    TAB-indented lines after its envelope) with json, B and E matched per (name, pid, tid)."""
    lines, spans, open_ = log.read_text().splitlines(), [], {}
    for i, line in enumerate(lines):
        if '{"chromium_event"' not in line:
            continue
        j = i + 1
        while j < len(lines) and lines[j].startswith("\t"):
            j += 1
        ev = json.loads("\n".join(x[1:] for x in lines[i + 1:j]))
        key = (ev["name"], ev.get("pid"), ev.get("tid"))
        if ev["ph"] == "B":
            open_.setdefault(key, []).append(ev["ts"])
        elif ev["ph"] == "E" and open_.get(key):
            spans.append({"name": ev["name"], "thread": key[1:], "b": open_[key].pop(), "e": ev["ts"]})
    return spans


STACK_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def kernel_stack_frames(log: Path) -> list[tuple[str, list[tuple[str, int]]]]:
    """(kernel name, its stack's frames as (file, line), outermost first) for every stack of a
    TORCH_TRACE log's `inductor_provenance_tracking_kernel_stack_traces` payloads, read apart from
    the parser."""
    lines, out = log.read_text().split("\n"), []
    for i, line in enumerate(lines):
        if '"inductor_provenance_tracking_kernel_stack_traces"' not in line:
            continue
        j = i + 1
        while j < len(lines) and lines[j].startswith("\t"):
            j += 1
        for key, stacks in json.loads("\n".join(x[1:] for x in lines[i + 1:j])).items():
            for stack in stacks:
                out.append((key.rpartition(":")[0], [(f, int(n)) for f, n in STACK_FRAME.findall(stack)]))
    return out
