"""torch-spyre's files of every era (tests/fixtures/spyre_eras: real files of AdnanHoque/torch-spyre,
see SOURCES.md), checked against the files as read here with the json module."""

from __future__ import annotations

import json
import re
import shutil

from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

ERAS = FIXTURES / "spyre_eras"
NAMED = ERAS / "stage253_validgap_e2e_1024"
SIDECAR = FIXTURES / "spyre_provenance" / "level0_and_fused" / "spyre_provenance.json"


def _bundle_files(folder):
    return re.findall(r'sdsc_filename="([^"]+)"', (folder / "bundle.mlir").read_text())


def test_the_named_spec_files_of_may_2026_are_kernels_in_bundle_order(tmp_path):
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([NAMED], db)
    assert s.errors == 0
    con = reader(db)
    for folder in sorted(NAMED.iterdir()):
        expected = [(next(iter(json.loads((folder / f).read_text()))), site)
                    for site, f in enumerate(_bundle_files(folder))]
        got = con.execute("SELECT kernel_name, site FROM kernels WHERE graph_id = ? ORDER BY site",
                          [folder.name]).fetchall()
        assert got == expected
        assert con.execute("SELECT kernel_count FROM graphs WHERE graph_id = ?", [folder.name]).fetchone() == (
            len(expected),)
    assert con.execute("SELECT count(*) FROM kernels").fetchone() == (5,)


def test_a_bundle_that_runs_an_absent_spec_is_an_error_and_the_others_stay(tmp_path):
    folder = tmp_path / "run" / "inductor-spyre" / "sdsc_fused_add_t_0_abcd1234"
    shutil.copytree(NAMED / "0001_sdsc_fused_add_t_0", folder)
    (folder / "sdsc_2_add.json").unlink()
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([tmp_path / "run"], db)
    con = reader(db)
    [(message,)] = con.execute("SELECT message FROM ingest_errors").fetchall()
    assert "sdsc_2_add.json" in message and "bundle.mlir" in message
    assert con.execute("SELECT count(*) FROM kernels").fetchone() == (3,)


def test_an_empty_bundle_is_one_error_naming_it(tmp_path):
    folder = tmp_path / "run" / "inductor-spyre" / "sdsc_fused_add_t_0_abcd1234"
    shutil.copytree(NAMED / "0001_sdsc_fused_add_t_0", folder)
    (folder / "bundle.mlir").write_text("")
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([tmp_path / "run"], db)
    con = reader(db)
    [(message, path)] = con.execute("SELECT message, path FROM ingest_errors").fetchall()
    assert "bundle.mlir is empty" in message
    assert con.execute("SELECT count(*) FROM kernels").fetchone() == (4,)


def test_the_sidecar_attaches_to_the_folders_torch_spyre_names(tmp_path):
    """Folders named as mkdtemp names them: `<kernel>_<8 chars>` and `<uuid8>_<kernel>_<8 chars>`."""
    doc = json.loads(SIDECAR.read_text())
    [base] = {doc["kernelIdentities"][o["identityKey"]]["eventNameBase"] for o in doc["kernelOccurrences"].values()
              if o["compilerKernelName"] == "sdsc_fused_linear_relu_0"}
    for folder_name in ("sdsc_fused_linear_relu_0_k3j9x2ab", "1a2b3c4d_sdsc_fused_linear_relu_0_k_9x2a_b"):
        run = tmp_path / folder_name
        shutil.copytree(FIXTURES / "spyre" / "add", run / "inductor-spyre" / folder_name)
        shutil.copy(SIDECAR, run / "spyre_provenance.json")
        db = str(tmp_path / f"{folder_name}.duckdb")
        ingest_paths([run], db)
        con = reader(db)
        assert con.execute("SELECT DISTINCT signature FROM kernels").fetchall() == [(f"{base}:add",)]
        lineage_graphs = {g for (g,) in con.execute("SELECT DISTINCT graph_id FROM lineage").fetchall()}
        assert lineage_graphs == {folder_name}


def test_a_spyre_profile_launches_its_kernels_in_their_compile(tmp_path):
    trace = json.loads((ERAS / "decode_bmm_upstream_main" / "aiu.pt.trace.json").read_text())
    events = trace["traceEvents"]
    [region] = [e for e in events if e.get("name", "").startswith("Torch-Compiled Region: ")]
    kernels = {e["name"]: e["dur"] for e in events if e.get("cat") == "kernel"}
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([ERAS / "decode_bmm_upstream_main"], db)
    con = reader(db)
    assert con.execute("SELECT device, device_name FROM runs").fetchall() == [("spyre", trace["deviceProperties"][0]["name"])]
    rows = con.execute("SELECT name, compile_id, duration_us FROM timings ORDER BY name").fetchall()
    assert rows == sorted((n, region["name"].split(": ")[1], d) for n, d in kernels.items())


def test_spyre_output_code_names_its_backend_device_and_category(tmp_path):
    graph = tmp_path / "torch_compile_debug" / "run_2026_08_16_10_00_00_000000-pid_4242" / "torchinductor" / \
        "model__0_inference_0.0"
    graph.mkdir(parents=True)
    code = (ERAS / "matmul_leaf_gate" / "output_code.py").read_text()
    (graph / "output_code.py").write_text(code)
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([tmp_path], db)
    con = reader(db)
    [name] = re.findall(r"^(\w+) = async_compile\.sdsc\(", code, re.M)
    assert "op='batchmatmul'" in code and "spyre:0" in code
    assert con.execute("SELECT device, backend FROM runs").fetchall() == [("spyre", "spyre")]
    assert con.execute("SELECT kernel_name, backend, category FROM kernels").fetchall() == [(name, "spyre", "matmul")]


def test_the_kernel_cache_is_one_run_of_its_kernel_folders(tmp_path):
    """torch-spyre's opt-in kernel cache (kernel_cache.py) writes `<cache dir>/inductor-spyre-cache/<key>/`
    and moves a failed compile to `failed/<key>.tmp.<uuid>/`: one cache dir, as `inductor-spyre/` is
    (composed: the real May 2026 kernel folders placed as the cache names them)."""
    cache = tmp_path / "torchinductor_user" / "inductor-spyre-cache"
    shutil.copytree(NAMED / "0001_sdsc_fused_add_t_0", cache / ("a" * 64))
    shutil.copytree(NAMED / "0002_sdsc_fused_mm_1", cache / "failed" / (("b" * 64) + ".tmp." + ("c" * 32)))
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([tmp_path], db)
    assert (s.runs, s.errors) == (1, 0)
    con = reader(db)
    assert con.execute("SELECT source_path FROM runs").fetchall() == [(str(tmp_path / "torchinductor_user"),)]
    assert con.execute("SELECT count(*), sum(kernel_count) FROM graphs").fetchone() == (2, 5)
