"""A run's own files say whether Inductor's caches were off (runs.caches_said, caches_said_by), so a
run made with TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 and no manifest `caches` key reads `off` in
run_cache, though torch leaves force_disable_caches out of compilation_metrics' inductor_config from
2.8 on. Each file kind is checked against a reading of the file made here (its env line, its
compiler_config, its inductor_meta), on the real runs of tests/fixtures (tests/fixtures/SOURCES.md)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import duckdb
import orjson
import pytest

from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.ingest.parsers import fx_graph_runnable, output_code, torch_trace
from inductor_warehouse.store.migrate import migrate
from tests.conftest import unpack, FIXTURES, reader

RUNS = FIXTURES / "runs"
GPU = RUNS / "gpu-torch2.11" / "mlp__train__fp32__default"
CPU_26 = RUNS / "cpu-torch2.6.0" / "mlp"
CPU_213 = RUNS / "cpu-torch2.13" / "transformer"
OLD_CACHES = FIXTURES / "old_caches" / "cpu-torch2.3-2.13-old-caches.tar.xz"
FORCE_LINE = "os.environ['TORCHINDUCTOR_FORCE_DISABLE_CACHES'] = '1'"


def _one(run: Path, name: str) -> Path:
    return sorted(run.rglob(name))[0]


def _trace(run: Path) -> Path:
    return _one(run / "trace", "dedicated_log_torch_trace_*.log")


def _metrics(log: Path) -> list[dict]:
    """compilation_metrics records of a trace log, read here with a regex and orjson."""
    out = []
    for line in log.read_bytes().splitlines():
        m = re.search(rb'\] (\{"compilation_metrics": .*)$', line)
        if m:
            out.append(orjson.loads(m.group(1))["compilation_metrics"])
    return out


def test_a_debug_tree_repro_script_says_off_by_its_env_line():
    gpu = _one(GPU, "fx_graph_runnable.py")
    assert FORCE_LINE in gpu.read_text().splitlines()
    said = fx_graph_runnable.parse_fx_graph_runnable(gpu.read_text()).facts["caches_said"]
    assert said == ("off", "fx_graph_runnable.py env: TORCHINDUCTOR_FORCE_DISABLE_CACHES=1")
    # 2.6 writes no os.environ lines, and sets neither cache option away from its default
    old = _one(CPU_26, "fx_graph_runnable.py").read_text()
    assert "os.environ[" not in old and "force_disable_caches" not in old and ".fx_graph_cache =" not in old
    assert "caches_said" not in fx_graph_runnable.parse_fx_graph_runnable(old).facts


def test_triton_kernels_inductor_meta_says_off_and_cpp_code_says_nothing():
    gpu = _one(GPU, "output_code.py").read_text()
    assert "'force_disable_caches': True" in gpu
    assert output_code.parse_output_code(gpu).facts["caches_said"] == (
        "off", "output code: inductor_meta force_disable_caches=True")
    cpp = _one(CPU_213, "output_code.py").read_text()
    assert "force_disable_caches" not in cpp
    assert "caches_said" not in output_code.parse_output_code(cpp).facts


def _without_runnable(log: Path) -> list[bytes]:
    """The log's lines less its fx_graph_runnable records (envelope line and tab-led payload)."""
    lines, skipping = [], False
    for line in log.read_bytes().splitlines():
        if line.startswith(b"\t"):
            if not skipping:
                lines.append(line)
            continue
        skipping = b'"fx_graph_runnable"' in line
        if not skipping:
            lines.append(line)
    return lines


def test_a_2_13_trace_says_off_by_its_repro_artifact_and_by_compiler_config():
    log = _trace(CPU_213)
    said = torch_trace.parse_torch_trace(log.read_bytes().splitlines()).facts["caches_said"]
    assert said == ("off", "trace fx_graph_runnable env: TORCHINDUCTOR_FORCE_DISABLE_CACHES=1")
    # torch leaves the option out of inductor_config (an alias of torch.compiler.config's):
    # compiler_config carries it
    metrics = _metrics(log)
    assert metrics and all("force_disable_caches" not in orjson.loads(m["inductor_config"]) for m in metrics)
    assert all(orjson.loads(m["compiler_config"])["force_disable_caches"] is True for m in metrics)
    rest = torch_trace.parse_torch_trace(_without_runnable(log))
    assert rest.facts["caches_said"] == (
        "off", "trace compilation_metrics compiler_config: force_disable_caches=True")


def test_a_2_6_trace_says_off_by_its_inductor_config():
    log = _trace(CPU_26)
    metrics = _metrics(log)
    assert metrics and all(orjson.loads(m["inductor_config"])["force_disable_caches"] is True for m in metrics)
    said = torch_trace.parse_torch_trace(log.read_bytes().splitlines()).facts["caches_said"]
    assert said == ("off", "trace compilation_metrics inductor_config: force_disable_caches=True")


def test_the_fixture_runs_made_with_caches_forced_off_read_off(tmp_path):
    """The five runs of tests/fixtures/runs: no manifest names their caches, every file says off."""
    runs = sorted(p for p in RUNS.glob("*/*") if p.is_dir())
    assert len(runs) == 5
    for run in runs:
        assert b'"caches"' not in (run / "manifest.json").read_bytes()
    db = str(tmp_path / "wh.duckdb")
    assert ingest_paths(runs, db).errors == 0
    con = reader(db)
    got = con.execute("""SELECT r.source_path, r.caches_said, r.caches_said_by, c.cache_temperature, c.fx_lookups
                         FROM runs r JOIN run_cache c USING (run_id) ORDER BY 1""").fetchall()
    assert [(Path(p).relative_to(RUNS).as_posix(), said, temp, n) for p, said, _, temp, n in got] == [
        ("cpu-torch2.13/transformer", "off", "off", 0),
        ("cpu-torch2.14.1/mlp", "off", "off", 0),
        ("cpu-torch2.6.0/mlp", "off", "off", 0),
        ("gpu-torch2.11/mlp__infer__bf16__max_autotune", "off", "off", 0),
        ("gpu-torch2.11/mlp__train__fp32__default", "off", "off", 0),
    ]
    by = {Path(p).relative_to(RUNS).as_posix(): b for p, _, b, _, _ in got}
    assert by["cpu-torch2.6.0/mlp"] == "trace compilation_metrics inductor_config: force_disable_caches=True"
    assert by["cpu-torch2.13/transformer"] == "trace fx_graph_runnable env: TORCHINDUCTOR_FORCE_DISABLE_CACHES=1"


@pytest.fixture(scope="module")
def old_caches(tmp_path_factory) -> Path:
    return unpack(OLD_CACHES, tmp_path_factory.mktemp("old_caches"))


def test_a_caches_on_trace_says_on_and_an_unread_one_stays_unknown(old_caches, tmp_path):
    """A 2.13 cold run on an empty cache, its trace log alone (no manifest): its inductor_config has
    the FX graph cache on, and its lookups are read. A 2.3 cold run says on (its manifest) but logs
    no lookup: its temperature stays unknown, not off."""
    log = _trace(old_caches / "2.13" / "gbreak_dyn-cold")
    metrics = _metrics(log)
    assert metrics and all(orjson.loads(m["inductor_config"])["fx_graph_cache"] is True for m in metrics)
    assert all(orjson.loads(m["compiler_config"])["force_disable_caches"] is False for m in metrics)
    alone = tmp_path / "cold213"
    alone.mkdir()
    shutil.copy(log, alone / log.name)
    cold23 = old_caches / "2.3.1" / "gbreak_dyn-cold"
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([alone, cold23], db)
    con = reader(db)
    rows = dict((Path(p).name, rest) for p, *rest in con.execute(
        """SELECT r.source_path, r.caches_said, r.caches_said_by, c.cache_temperature
           FROM runs r JOIN run_cache c USING (run_id)""").fetchall())
    assert rows[log.name] == ["on", "trace compilation_metrics inductor_config: fx_graph_cache=True", "cold"]
    assert rows["gbreak_dyn-cold"] == ["on", "manifest: caches=on", None]


def test_migration_0059_backfills_what_the_stored_records_say(tmp_path):
    """A warehouse written before 0059 (its runs without the columns): the migration reads the stored
    compilation_metrics, so a 2.13 run forced off reads off without being ingested again."""
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([CPU_213, CPU_26], db)
    con = duckdb.connect(db)
    con.execute("ALTER TABLE runs DROP COLUMN caches_said")
    con.execute("ALTER TABLE runs DROP COLUMN caches_said_by")
    con.execute("DELETE FROM _migrations WHERE name = '0059_caches_said'")
    assert migrate(con) == ["0059_caches_said"]
    got = con.execute("""SELECT r.source_path, r.caches_said, r.caches_said_by, c.cache_temperature
                         FROM runs r JOIN run_cache c USING (run_id) ORDER BY 1""").fetchall()
    con.close()
    assert got == [
        (str(CPU_213), "off", "trace compilation_metrics compiler_config", "off"),
        (str(CPU_26), "off", "trace compilation_metrics inductor_config", "off"),
    ]
