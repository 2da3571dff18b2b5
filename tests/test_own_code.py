"""What the pages and `iwh compare` show as a kernel's code is that kernel's own, as its run wrote it.

kernel_sources keeps one text per normalised source hash (the least of the identical kernels'). In the
2.6.0 TORCH_TRACE fixture, graphs 1_inference and 2_inference each define `cpp_fused_0` and
`cpp_fused_1` with equal normalised source, but each graph's `#include` names its own cache folder
(`tmpc5i3yh2f` and `tmpkhbh3il2`): one graph's kernels share the other's kept text. torch-spyre's
mul and mul_bf16 folders likewise share one spec hash with two texts (debug handles, addresses); a
Spyre folder has no output code, so its page says the spec shown is an identical kernel's.
"""

from __future__ import annotations

import gzip
import re
import subprocess
from pathlib import Path

import pytest

from inductor_warehouse.analysis.kernel_code import NORMALISED, SHARED_NOTE_SPYRE, KernelCodes, code_diff
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import IWH, reader
from tests.test_dashboards import open_page, with_copy

FIXTURES = Path(__file__).parent / "fixtures"
LOG_26 = FIXTURES / "torch_trace" / "cpu-torch2.6.0-ca" / "dedicated_log_torch_trace__p9er2cv.log.gz"
LOG_2141 = FIXTURES / "torch_trace" / "cpu-torch2.14.1-ca"
SPYRE = [FIXTURES / "spyre" / "mul", FIXTURES / "spyre" / "mul_bf16"]


def output_code(log: Path, aot_id: str) -> str:
    """The `inductor_output_code` payload of one graph, read straight from the log: a record's payload
    is the tab-indented lines after its glog line."""
    records: list[tuple[str, list[str]]] = []
    for line in gzip.open(log, "rt").read().split("\n"):
        if line.startswith("\t"):
            records[-1][1].append(line[1:])
        else:
            records.append((line, []))
    found = [p for head, p in records if '{"inductor_output_code"' in head and p and p[0] == f"# AOT ID: ['{aot_id}']"]
    assert len(found) == 1, aot_id
    return "\n".join(found[0])


def defined(code: str, name: str) -> str:
    """The text inside `<name> = async_compile.cpp_pybinding([...], '''...'''`."""
    m = re.search(rf"^{name} = async_compile\.cpp_pybinding\(\[[^\]]*\], '''\n(.*?)'''", code, re.M | re.S)
    assert m, name
    return m.group(1)


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("own") / "own.duckdb")
    ingest_paths([str(LOG_26), str(LOG_2141)], db, model="ca")
    ingest_paths([str(p) for p in SPYRE], db)
    return with_copy(db)


def _one(db: str, sql: str, params=()):
    con = reader(db + ".check")
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def _run_of(db: str, path: Path) -> str:
    return _one(db, "SELECT run_id FROM runs WHERE source_path = ?", [str(path)])[0][0]


def test_each_graph_shows_its_own_include_not_the_kept_one(wh):
    run = _run_of(wh, LOG_26)
    kept = dict(_one(wh, "SELECT k.graph_id, s.source FROM kernels k JOIN kernel_sources s USING (source_hash) "
                         "WHERE k.run_id = ? AND k.kernel_name = 'cpp_fused_0'", [run]))
    assert set(kept) == {"1_inference", "2_inference"} and kept["1_inference"] == kept["2_inference"]
    con = reader(wh + ".check")
    try:
        codes = KernelCodes(con)
        for graph, folder in (("1_inference", "tmpc5i3yh2f"), ("2_inference", "tmpkhbh3il2")):
            for name in ("cpp_fused_0", "cpp_fused_1"):
                own = defined(output_code(LOG_26, graph), name)
                assert f"/tmp/torchinductor_user/{folder}/" in own
                code = codes.get(run, graph, name)
                assert (code.kernel_name, code.text, code.own, code.note) == (name, own, True, None)
        # one of the two graphs shows a text that is not the kept one: the defect this guards against
        shown = {g: codes.get(run, g, "cpp_fused_0").text for g in kept}
        assert shown["1_inference"] != shown["2_inference"] and kept["2_inference"] in shown.values()
        # the diff of the two is empty: they differ in their cache paths alone
        assert code_diff(codes.get(run, "1_inference", "cpp_fused_0"), codes.get(run, "2_inference", "cpp_fused_0")) == ""
    finally:
        con.close()


def test_spyre_spec_is_the_kept_one_and_says_so(wh):
    texts_of = {_one(wh, "SELECT s.source FROM kernels k JOIN kernel_sources s USING (source_hash) "
                         "WHERE k.run_id = ?", [_run_of(wh, p)])[0][0] for p in SPYRE}
    assert len(texts_of) == 1  # one hash, one kept spec, though the two files differ
    assert (SPYRE[0] / "sdsc_0.json").read_text() != (SPYRE[1] / "sdsc_0.json").read_text()
    con = reader(wh + ".check")
    try:
        for p in SPYRE:
            code = KernelCodes(con).get(_run_of(wh, p), p.name, "0_mul")
            assert (code.own, code.text, code.note) == (False, next(iter(texts_of)), SHARED_NOTE_SPYRE)
    finally:
        con.close()


def test_explorer_shows_the_kernels_own_code(wh, monkeypatch):
    run = _run_of(wh, LOG_26)
    at = open_page(wh, "explorer", monkeypatch, explore_run=run, graph="2_inference", explore_kernel="cpp_fused_0")
    assert at.selectbox(key="explore_kernel").value == "cpp_fused_0"
    own = defined(output_code(LOG_26, "2_inference"), "cpp_fused_0")
    shown = [c.value for c in at.code if "void kernel(" in c.value]
    assert shown == [own.rstrip()]  # st.code drops trailing whitespace
    assert not [c.value for c in at.caption if "identical kernel" in c.value]


def test_explorer_captions_a_spyre_spec(wh, monkeypatch):
    at = open_page(wh, "explorer", monkeypatch, explore_run=_run_of(wh, SPYRE[1]))
    assert at.selectbox(key="explore_kernel").value == "0_mul"
    assert SHARED_NOTE_SPYRE in [c.value for c in at.caption]


def test_compare_show_code_diffs_each_sides_own_normalised_code(wh):
    base, head = _run_of(wh, LOG_26), _one(wh, "SELECT run_id FROM runs WHERE source_path LIKE ?",
                                           [f"{LOG_2141}/%"])[0][0]
    out = subprocess.run([*IWH, "--db", wh + ".check", "compare", "--base", base, "--head", head, "--model", "ca",
                          "--kernels", "--show-code"], capture_output=True, text=True, check=True).stdout
    assert f"code diffs: each side's own code as its run wrote it, {NORMALISED}" in out
    section = out.split("code diff: forward: cpp_fused_relu_0 -> cpp_fused_relu_0\n")[1].split("\ncode diff:")[0]
    assert section.startswith("--- base/cpp_fused_relu_0\n+++ head/cpp_fused_relu_0\n")
    base_lines = [ln[1:] for ln in section.splitlines()[2:] if ln[:1] in ("-", " ")]
    # the base side's lines are, in order, its own text with the quoted cache path made <path>
    own = iter(re.sub(r'"/[^"]*"', '"<path>"', defined(output_code(LOG_26, "0_forward"), "cpp_fused_relu_0")).splitlines())
    assert len(base_lines) > 5 and all(line in own for line in base_lines)
