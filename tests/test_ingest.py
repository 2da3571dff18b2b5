"""End-to-end ingest of real run folders: counts checked against an independent reading of the files."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader, rows_off_their_runs_key, without_run_keys

RUNS = FIXTURES / "runs"
KERNEL_DEF = re.compile(r"^\w+ = async_compile\.(?:triton|cpp_pybinding|cpp)\(", re.M)
HEADER = re.compile(r"^op\d+(?:_op\d+)*: \w+\(")
PRE_OP = re.compile(r"^op\d+: ", re.M)


def graph_dirs(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("output_code.py"))


def top_level_records(text: str) -> int:
    """Headers of ir_post_fusion.txt that are not the sub-records of a fused node."""
    lines = text.splitlines()

    def is_member(i: int) -> bool:
        return i > 0 and ".snodes[" in lines[i - 1] and lines[i - 1].endswith("=")

    return sum(1 for i, line in enumerate(lines) if HEADER.match(line) and not is_member(i))


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("wh") / "wh.duckdb")
    summary = ingest_paths([RUNS], path)
    con = reader(path)
    yield con, summary
    con.close()


def test_every_fixture_run_is_found_with_its_manifest(wh):
    con, summary = wh
    assert summary.runs == len(list(RUNS.glob("*/*/manifest.json"))) == 5 and summary.errors == 0
    by_path = {Path(p).parent.name + "/" + Path(p).name: (m, v, d, b) for p, m, v, d, b in con.execute(
        "SELECT source_path, model, compiler_version, device, backend FROM runs").fetchall()}
    for folder, (model, version, device, backend) in by_path.items():
        manifest = json.loads((RUNS / folder / "manifest.json").read_text())
        assert model == manifest["model"]
        assert version == manifest["torch"]
        assert device == manifest["device"]
        assert backend == ("triton" if device == "cuda" else "cpp")
    assert sorted(by_path) == sorted(p.relative_to(RUNS).as_posix() for p in RUNS.glob("*/*"))


def test_labels_are_the_manifest_keys_except_model(wh):
    con, _ = wh
    labels = con.execute(
        "SELECT labels FROM runs WHERE source_path LIKE '%mlp__train__fp32__default'").fetchone()[0]
    labels = json.loads(labels)
    assert labels["variant"] == "default" and labels["mode"] == "train" and labels["dtype"] == "fp32"
    assert "model" not in labels


@pytest.mark.parametrize("run", sorted(p.relative_to(RUNS).as_posix() for p in RUNS.glob("*/*")))
def test_graph_counts_match_the_files(wh, run):
    con, _ = wh
    root = RUNS / run
    got = {
        folder: (kernels, pre, post)
        for folder, kernels, pre, post in con.execute(
            "SELECT g.folder, g.kernel_count, g.pre_fusion_nodes, g.post_fusion_nodes "
            "FROM graphs g JOIN runs r USING (run_id) WHERE r.source_path = ?", [str(root.absolute())]
        ).fetchall()
    }
    expected = {}
    for d in graph_dirs(root):
        expected[d.name] = (
            len(KERNEL_DEF.findall((d / "output_code.py").read_text())),
            len(PRE_OP.findall((d / "ir_pre_fusion.txt").read_text())),
            top_level_records((d / "ir_post_fusion.txt").read_text()),
        )
    assert got == expected
    assert all(k > 0 for k, _, _ in expected.values())


def test_gpu_pre_fusion_nodes_sum_to_ground_truth(wh):
    con, _ = wh
    root = RUNS / "gpu-torch2.11" / "mlp__train__fp32__default"
    truth = json.loads((root / "ground_truth.json").read_text())["ir_nodes_pre_fusion"]
    got = con.execute(
        "SELECT sum(pre_fusion_nodes) FROM graphs JOIN runs USING (run_id) WHERE source_path = ?",
        [str(root.absolute())]).fetchone()[0]
    assert got == truth
    phases = sorted(r[0] for r in con.execute(
        "SELECT phase FROM graphs JOIN runs USING (run_id) WHERE source_path = ?", [str(root.absolute())]).fetchall())
    assert phases == ["backward", "forward"]


def test_ops_follow_fx_graph_readable_line_by_line(wh):
    con, _ = wh
    root = RUNS / "cpu-torch2.13" / "transformer"
    for d in graph_dirs(root):
        text = (d / "fx_graph_readable.py").read_text()
        names = re.findall(r"^        (\w+)(?:: \"[^\"]*\")? = ", text, re.M)
        got = [r[0] for r in con.execute(
            "SELECT o.name FROM ops o JOIN graphs g USING (run_id, graph_id) JOIN runs r USING (run_id) "
            "WHERE r.source_path = ? AND g.folder = ? AND o.op_kind NOT IN ('placeholder', 'output') ORDER BY o.idx",
            [str(root.absolute()), d.name]).fetchall()]
        assert got == names and len(names) > 10


def test_extern_calls_are_kernels_that_are_not_generated(wh):
    con, _ = wh
    root = RUNS / "cpu-torch2.13" / "transformer"
    d = next(d for d in graph_dirs(root) if "forward" in d.name)
    text = (d / "output_code.py").read_text()
    call_body = text[text.index("def call("):]
    expected = len(re.findall(r"^\s+(?:\w+ = )?extern_kernels\.\w+\(", call_body, re.M))
    got = con.execute(
        "SELECT count(*) FROM kernels k JOIN graphs g USING (run_id, graph_id) JOIN runs r USING (run_id) "
        "WHERE r.source_path = ? AND g.folder = ? AND NOT k.generated AND k.kernel_name LIKE 'extern_kernels.%'",
        [str(root.absolute()), d.name]).fetchone()[0]
    assert got == expected > 0


def test_kernel_source_is_kept_by_hash(wh):
    con, _ = wh
    missing = con.execute(
        "SELECT count(*) FROM kernels k LEFT JOIN kernel_sources s USING (source_hash) "
        "WHERE k.generated AND s.source IS NULL").fetchone()[0]
    assert missing == 0
    src = con.execute(
        "SELECT s.source FROM kernels k JOIN kernel_sources s USING (source_hash) "
        "WHERE k.backend = 'triton' LIMIT 1").fetchone()[0]
    assert "@triton.jit" in src


def test_reingest_skips_unchanged_and_replaces_changed(tmp_path, monkeypatch):
    from inductor_warehouse.ingest import load, unchanged

    src = tmp_path / "runs"
    shutil.copytree(RUNS / "cpu-torch2.6.0", src / "a")
    db = str(tmp_path / "wh.duckdb")
    first = ingest_paths([src], db)
    again = ingest_paths([src], db)
    assert (first.runs, again.runs, again.skipped_runs) == (1, 0, 1)
    out = next(src.rglob("output_code.py"))
    os.utime(out, (1, 1))  # same content, new mtime: hashed, found equal, skipped without parsing
    monkeypatch.setattr(load, "assemble", lambda *a: pytest.fail("an unchanged run was parsed"))
    touched = ingest_paths([src], db)
    assert (touched.runs, touched.skipped_runs) == (0, 1)
    # the new mtime was recorded: the next ingest skips on stat alone, hashing nothing
    monkeypatch.setattr(unchanged, "file_hash", lambda *a: pytest.fail("an unchanged run was hashed"))
    assert ingest_paths([src], db).skipped_runs == 1
    monkeypatch.undo()
    out.write_text(out.read_text().replace("def call(", "def call(  ", 1))  # a real change
    changed = ingest_paths([src], db)
    con = reader(db)
    assert changed.runs == 1 and changed.run_ids != first.run_ids
    assert con.execute("SELECT run_id FROM runs").fetchall() == [(changed.run_ids[0],)]  # replaced
    assert con.execute("SELECT count(DISTINCT run_id) FROM graphs").fetchone()[0] == 1
    con.close()


def test_same_artifacts_elsewhere_get_the_same_run_id(tmp_path):
    a, b = tmp_path / "a", tmp_path / "elsewhere" / "b"
    shutil.copytree(RUNS / "cpu-torch2.14.1" / "mlp", a)
    shutil.copytree(RUNS / "cpu-torch2.14.1" / "mlp", b)
    s1 = ingest_paths([a], str(tmp_path / "1.duckdb"))
    s2 = ingest_paths([b], str(tmp_path / "2.duckdb"))
    assert s1.run_ids == s2.run_ids


def test_debug_tree_alone_and_stray_files(tmp_path):
    root = tmp_path / "x"
    shutil.copytree(next((RUNS / "cpu-torch2.14.1" / "mlp").glob("torch_compile_debug")), root / "torch_compile_debug")
    (root / "notes.bin").write_bytes(b"\x00\x01 unrelated")
    s = ingest_paths([root], str(tmp_path / "wh.duckdb"), model="mine", labels={"variant": "v1"})
    assert s.runs == 1 and s.errors == 0
    assert s.skipped_files["unrecognised file"] == 1
    con = reader(str(tmp_path / "wh.duckdb"))
    model, labels, version = con.execute("SELECT model, labels, compiler_version FROM runs").fetchone()
    runnable = next(root.rglob("fx_graph_runnable.py")).read_text()
    written = re.search(r"^# torch version: (\S+)", runnable, re.M).group(1)
    assert (model, json.loads(labels), version) == ("mine", {"variant": "v1"}, written)


def _broken_run(tmp_path: Path) -> Path:
    """A real 2.13 transformer run, damaged the ways real runs get damaged."""
    root = tmp_path / "broken"
    shutil.copytree(RUNS / "cpu-torch2.13" / "transformer", root)
    inductor = next(root.rglob("torchinductor"))
    bwd, fwd = sorted(inductor.glob("model__0_*"))  # names sort backward first
    code = (bwd / "output_code.py").read_text()
    (bwd / "output_code.py").write_text(code[: len(code) // 2])  # truncated mid-kernel
    ir = (fwd / "ir_post_fusion.txt").read_text()
    (fwd / "ir_post_fusion.txt").write_text(ir[: ir.index(".outputs = [", len(ir) // 2) + 20])
    (fwd / "fx_graph_readable.py").write_bytes(os.urandom(4096))
    (inductor / "model__1_inference_4.2").mkdir()  # empty: killed before writing
    only_pre = inductor / "model__2_inference_5.3"
    only_pre.mkdir()
    shutil.copy(fwd / "ir_pre_fusion.txt", only_pre / "ir_pre_fusion.txt")
    return root


def test_broken_inputs_are_recorded_and_the_rest_kept(tmp_path):
    root = _broken_run(tmp_path)
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([root], db)
    con = reader(db)
    errors = con.execute("SELECT path, kind, message FROM ingest_errors").fetchall()
    paths = " ".join(p for p, _, _ in errors)
    assert s.errors == len(errors) > 0
    assert "model__0_backward" in paths and "output_code.py" in paths
    assert any("ir_post_fusion.txt" in p and "forward" in p for p, _, _ in errors)
    assert any("fx_graph_readable.py" in p and "forward" in p for p, _, _ in errors)
    assert any("model__1_inference_4.2" in p or "model__1_inference_4.2" in m for p, _, m in errors)
    assert sum("model__2_inference_5.3" in (p + m) for p, _, m in errors) >= 3  # its missing files
    # the forward graph's kernels survive beside the damage; its ops are lost with the garbage file
    fwd_code = next(root.rglob("model__0_forward_*/output_code.py")).read_text()
    kept = con.execute("SELECT kernel_count FROM graphs WHERE folder LIKE 'model__0_forward%'").fetchone()[0]
    assert kept == len(KERNEL_DEF.findall(fwd_code))
    # the trace log of the same process is still ingested
    assert con.execute("SELECT count(*) FROM compilations").fetchone()[0] > 0


def test_strict_turns_errors_into_a_failure(tmp_path):
    root = _broken_run(tmp_path)
    runner = CliRunner()
    db = str(tmp_path / "wh.duckdb")
    lenient = runner.invoke(cli, ["--db", db, "ingest", str(root)])
    assert lenient.exit_code == 0, lenient.output
    assert re.search(r"ingested 1 run, .* [1-9]\d* errors", lenient.output)
    strict = runner.invoke(cli, ["--db", str(tmp_path / "s.duckdb"), "ingest", "--strict", str(root)])
    assert strict.exit_code != 0 and "--strict" in strict.output


def test_cli_runs_and_read_only_sql(wh, tmp_path):
    _, summary = wh
    db = str(tmp_path / "c.duckdb")
    ingest_paths([RUNS / "cpu-torch2.6.0"], db)
    runner = CliRunner()
    out = runner.invoke(cli, ["--db", db, "runs", "--format", "json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    mlp = (RUNS / "cpu-torch2.6.0" / "mlp")
    assert [(r["model"], r["kernels"]) for r in rows] == [
        ("mlp", sum(len(KERNEL_DEF.findall(p.read_text())) for p in mlp.rglob("output_code.py")))]
    denied = runner.invoke(cli, ["--db", db, "sql", "DELETE FROM runs"])
    assert denied.exit_code != 0
    denied = runner.invoke(cli, ["--db", db, "sql", "SELECT * FROM read_csv('/etc/passwd')"])
    assert denied.exit_code != 0
    missing = runner.invoke(cli, ["--db", str(tmp_path / "none.duckdb"), "runs"])
    assert missing.exit_code != 0 and "iwh ingest" in missing.output


def test_an_older_warehouse_is_upgraded_in_place(tmp_path, monkeypatch):
    from inductor_warehouse.schema import ddl
    from inductor_warehouse.store import opening as warehouse

    migs = tmp_path / "migrations"
    migs.mkdir()
    for p in ddl.migration_files():
        shutil.copy(p, migs / p.name)
    db = str(tmp_path / "old.duckdb")
    monkeypatch.setattr(ddl, "MIGRATIONS", migs)
    warehouse.connect(db).close()
    (migs / "9999_test_extra.sql").write_text("ALTER TABLE runs ADD COLUMN test_extra VARCHAR;")
    with pytest.raises(warehouse.WarehouseError, match="upgrade it in place"):
        warehouse.connect(db, read_only=True)
    con = warehouse.connect(db)
    cols = [r[0] for r in con.execute("DESCRIBE runs").fetchall()]
    applied = [r[0] for r in con.execute("SELECT name FROM _migrations ORDER BY name").fetchall()]
    con.close()
    assert "test_extra" in cols and applied[-1] == "9999_test_extra"


def test_fusion_groups_name_the_kernel_they_became(wh):
    con, _ = wh
    rows = con.execute(
        "SELECT f.run_id, f.graph_id, f.node_class, f.kernel_name, k.generated "
        "FROM fusions f LEFT JOIN (SELECT DISTINCT run_id, graph_id, kernel_name, generated FROM kernels) k "
        "USING (run_id, graph_id, kernel_name)").fetchall()
    named = [r for r in rows if r[3] is not None]
    # every name given is a kernel of that very graph: generated for scheduler nodes, extern for extern nodes
    assert all(r[4] is not None for r in named)
    assert all(r[4] == (not r[2].startswith("Extern")) for r in named)
    # and every generated kernel launched in a graph is the kernel of some fusion group
    unnamed = con.execute(
        "SELECT k.kernel_name FROM kernels k WHERE k.generated AND NOT EXISTS (SELECT 1 FROM fusions f "
        "WHERE f.run_id = k.run_id AND f.graph_id = k.graph_id AND f.kernel_name = k.kernel_name)").fetchall()
    assert unnamed == [] and len(named) > 40


def test_a_warehouse_missing_a_newer_view_is_refused_read_only_until_migrated(tmp_path):
    from inductor_warehouse.store import opening as warehouse

    db = str(tmp_path / "wh.duckdb")
    warehouse.connect(db).close()
    con = duckdb.connect(db)
    # as a file made before that view existed: an older iwh wrote it, from other view files
    con.execute("DROP VIEW run_label_values")
    con.execute("UPDATE _views SET digest = 'an older release of the views'")
    con.close()
    with pytest.raises(warehouse.WarehouseError, match="run_label_values"):
        warehouse.connect(db, read_only=True)
    assert CliRunner().invoke(cli, ["--db", db, "migrate"]).exit_code == 0
    warehouse.connect(db, read_only=True).close()


def test_every_row_of_a_run_carries_the_runs_key(wh):
    """run_key (migration 0011): one number a run, on runs and on every row the run wrote; queries
    of one run find its rows by it (zone maps). Checked table by table against runs."""
    from inductor_warehouse.schema.ddl import FACT_TABLES
    con, summary = wh
    keys = dict(con.execute("SELECT run_id, run_key FROM runs").fetchall())
    assert len(keys) == summary.runs and sorted(keys.values()) == list(range(1, summary.runs + 1))
    for table in FACT_TABLES:
        rows = con.execute(f"SELECT run_id, run_key, count(*) FROM {table} WHERE run_id IS NOT NULL GROUP BY ALL").fetchall()
        assert all(keys[run_id] == key for run_id, key, _ in rows), table


def test_a_replaced_run_takes_a_new_key_and_an_old_warehouse_is_numbered(tmp_path):
    from inductor_warehouse.schema.ddl import FACT_TABLES
    from inductor_warehouse.store.opening import connect

    src = tmp_path / "runs"
    for name in ("cpu-torch2.6.0", "cpu-torch2.13"):
        shutil.copytree(RUNS / name, src / name)
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([src], db)
    out = next((src / "cpu-torch2.6.0").rglob("output_code.py"))
    out.write_text(out.read_text().replace("def call(", "def call(  ", 1))
    changed = ingest_paths([src], db)
    con = duckdb.connect(db)
    keys = dict(con.execute("SELECT run_id, run_key FROM runs").fetchall())
    assert keys[changed.run_ids[0]] == max(keys.values()) == len(keys) + 1  # the replaced run's key is not reused
    # the replaced run's rows went with it, table by table (deleted by its key)
    for table in FACT_TABLES:
        assert con.execute(f"SELECT count(*) FROM {table} WHERE run_id IS NOT NULL AND run_id NOT IN "
                           "(SELECT run_id FROM runs)").fetchone()[0] == 0, table
        assert con.execute(f"SELECT count(DISTINCT run_key) <= {len(keys)} FROM {table}").fetchone()[0], table
    # a warehouse written before run keys: migration 0011 numbers its runs in ingest order, and their rows
    without_run_keys(con)
    con.close()
    con = connect(db)
    assert [k for (k,) in con.execute("SELECT run_key FROM runs ORDER BY ingested_at, run_id").fetchall()] == \
        list(range(1, len(keys) + 1))
    for table in ("graphs", "kernels", "ops", "lineage", "run_rollups"):
        assert rows_off_their_runs_key(con, table) == 0, table
    con.close()
