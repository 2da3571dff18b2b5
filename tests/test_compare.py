"""`iwh compare` on real runs: the CPU corpora across three releases, the GPU corpus across config
variants (corpus-marked), and the regression rules on their own.

Expected numbers are counted from the artifacts with a regex in the test (kernel definitions in
output_code.py), never taken from the code under test."""

from __future__ import annotations

import json

import csv
import difflib
import io
import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from inductor_warehouse.analysis import regress
from inductor_warehouse.cli.main import cli
from inductor_warehouse.analysis.compare import compare
from inductor_warehouse.analysis.kernel_diff import kernel_diff
from inductor_warehouse.analysis.kernel_match import CHANGED, RENAMED, SAME
from inductor_warehouse.analysis.canned_rows import run_query
from inductor_warehouse.analysis.selectors import parse_selector
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import reader, unpack_cpu_corpora

# a kernel definition in output_code.py: `cpp_fused_x_0 = async_compile.cpp_pybinding(` (C++),
# `triton_poi_fused_0 = async_compile.triton(` (Triton)
KERNEL_DEF = re.compile(r"^(\w+) = async_compile\.(?:cpp_pybinding|cpp|triton)\(", re.M)
COUNTER = re.compile(r"_\d+$")
GPU_RUNS = [f"hf_bert__{mode}__fp32__{variant}" for mode in ("infer", "train")
            for variant in ("default", "aggressive_fusion")] + ["hf_bert__infer__bf16__default"]


@pytest.fixture(scope="module")
def cpu(tmp_path_factory) -> tuple[str, Path]:
    """A warehouse of the three bundled CPU corpora, and where they were unpacked."""
    root = tmp_path_factory.mktemp("compare_cpu")
    unpack_cpu_corpora(root)
    db = str(root / "wh.duckdb")
    ingest_paths([str(root)], db)
    return db, root


def corpus_dir(root: Path, version: str) -> Path:
    """Where one release's runs were unpacked (each archive holds a cpu-torch<version>/ folder)."""
    return next(root.glob(f"*/cpu-torch{version}"))


def kernel_names(run_dir: Path) -> list[str]:
    return [m.group(1) for f in sorted(run_dir.glob("torch_compile_debug/*/torchinductor/*/output_code.py"))
            for m in KERNEL_DEF.finditer(f.read_text())]


def iwh(db: str, *args: str):
    return CliRunner().invoke(cli, ["--db", db, "compare", *args])


def test_release_upgrade_that_adds_kernels_fails_the_gate(cpu):
    db, root = cpu
    res = iwh(db, "--base", "compiler=2.6.0+cu124", "--head", "compiler=2.13.0+cpu", "--fail-on", "regression")
    assert res.exit_code == 1, res.output
    assert "ca kernels" in res.output and "cnn kernels" in res.output


def failed_compiles(log: str) -> dict[str, tuple[str, str, int]]:
    """compile id -> (fail_type, fail_user_frame file name, line) of the log's compilation_metrics
    records that report a failure, read here with json, not by the parser under test."""
    out = {}
    for line in log.splitlines():
        if '{"compilation_metrics": ' in line:
            m = json.loads(line[line.index("{"):])["compilation_metrics"]
            if m.get("fail_type"):
                out[m["compile_id"]] = (m["fail_type"], m["fail_user_frame_filename"].rsplit("/", 1)[-1],
                                        m["fail_user_frame_lineno"])
    return out


def test_new_compile_failures_fail_the_gate_and_are_named(cpu):
    """2.14.1 fails to compile three of ca's frames under compiled autograd (Dynamo's 'Observed
    exception', gb0088) and runs them eagerly, and recompiles inspect.py's frames; 2.13 compiles every
    frame once. Kernels, fusion and graph breaks are the same in both."""
    db, root = cpu
    failed = {v: failed_compiles(next((corpus_dir(root, v) / "ca" / "trace").glob("*.log")).read_text())
              for v in ("2.13", "2.14.1")}
    assert failed["2.13"] == {} and sorted(failed["2.14.1"]) == ["1/0", "3/0", "5/0"]
    res = iwh(db, "--base", "compiler=2.13", "--head", "compiler=2.14.1", "--fail-on", "regression")
    assert res.exit_code == 1, res.output
    assert "3 regressions: ca failures, ca fallbacks, ca recompiles" in res.output
    for cid, (fail_type, file, line) in failed["2.14.1"].items():
        row = next(r for r in res.stdout.splitlines() if r.startswith("ca ") and f" {cid} " in r)
        assert f"{file}:{line}" in row and "gb0088" in row and fail_type in row, row
    result = compare(reader(db), "compiler=2.13", "compiler=2.14.1", model="ca")
    m = result.pairs[0].metrics
    assert (m["failures"].base, m["failures"].head, m["failures"].verdict) == (0, 3, regress.REGRESSION)
    assert (m["fallbacks"].head, m["fallbacks"].verdict) == (3, regress.REGRESSION)
    assert [f.compile_id for f in result.pairs[0].new_failures] == sorted(failed["2.14.1"])
    # with failures and recompiles not gated, the releases are structurally the same
    res = iwh(db, "--base", "compiler=2.13", "--head", "compiler=2.14.1", "--fail-on", "regression",
              "--threshold", "failures=off", "--threshold", "fallbacks=off", "--threshold", "recompiles=off")
    assert res.exit_code == 0, res.output


def test_a_failure_of_a_new_cause_is_a_regression_at_the_same_count():
    """The count holds (one failure a side) but the head's cause is new: still a regression."""
    from inductor_warehouse.analysis.metrics import Failure, judge_pair

    def run(run_id, failures):
        return {"run_id": run_id, "model": "m", "config": {}, "failures": failures, "fallbacks": failures}

    old, new = Failure("b", "0/0", "gb0001", "A", True, None), Failure("h", "0/0", "gb0002", "B", True, None)
    pair = judge_pair("m", [run("b", 1)], [run("h", 1)], regress.DEFAULT_RULES, {"b": [old], "h": [new]})
    assert pair.metrics["failures"].verdict == regress.REGRESSION and pair.metrics["failures"].how == "new: gb0002"
    assert pair.new_failures == [new] and pair.fixed_failures == [old]
    same = judge_pair("m", [run("b", 1)], [run("h", 1)], regress.DEFAULT_RULES, {"b": [old], "h": [old]})
    assert same.metrics["failures"].verdict == regress.UNCHANGED and not same.new_failures


def test_per_model_kernel_counts_equal_the_artifacts_and_the_graphs_table(cpu):
    db, root = cpu
    con = reader(db)
    result = compare(con, "compiler=2.6.0+cu124", "compiler=2.13.0")
    per_graph = dict(con.execute("""
        SELECT r.model || '@' || r.compiler_version, sum(g.kernel_count)
        FROM graphs g JOIN runs r USING (run_id) GROUP BY ALL""").fetchall())
    assert sorted(p.model for p in result.pairs) == ["ca", "cnn", "dynamic", "mlp", "transformer"]
    assert not result.base_only and not result.head_only
    counted = {}
    for p in result.pairs:
        base = len(kernel_names(corpus_dir(root, "2.6.0") / p.model))
        head = len(kernel_names(corpus_dir(root, "2.13") / p.model))
        counted[p.model] = (base, head)
        assert (p.metrics["kernels"].base, p.metrics["kernels"].head) == (base, head), p.model
        assert base == per_graph[f"{p.model}@2.6.0+cu124"] and head == per_graph[f"{p.model}@2.13.0+cpu"]
    # by hand from the runs' output_code.py files: cnn 6 -> 8, ca 9 -> 10 kernels
    cnn = next(p for p in result.pairs if p.model == "cnn")
    assert (cnn.metrics["kernels"].delta, round(cnn.metrics["kernels"].pct, 1)) == (2, 33.3)
    assert sorted(result.regressions)[:2] == [("ca", "kernels"), ("cnn", "extern_kernels")]
    kernels = next(s for s in result.summary if s.metric == "kernels")
    ratios = [head / base for base, head in counted.values()]  # from the files, not from the result
    assert kernels.models == 5 and math.isclose(kernels.geomean_ratio, math.prod(ratios) ** (1 / 5))


def test_csv_is_one_row_per_model_with_plain_cells(cpu):
    db, root = cpu
    res = iwh(db, "--base", "compiler=2.13.0", "--head", "compiler=2.14.1", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert [r["model"] for r in rows] == ["ca", "cnn", "dynamic", "mlp", "transformer"]
    for r in rows:
        n = len(kernel_names(corpus_dir(root, "2.13") / r["model"]))
        assert (r["kernels_base"], r["kernels_head"], r["kernels_delta"]) == (str(n), str(n), "0")


def test_every_frame_counts_and_where_it_happened_is_a_breakdown(cpu):
    """2.14.1 compiles inspect.py frames under compiled autograd (ca): its trace has 14
    compilation_metrics records against 4 in 2.13, 3 graph-break records of frames that could not
    handle their break and fell back to eager (Dynamo counts those as failed frames, not graph breaks)
    and 4 recompiles (4 recompile_reasons artifacts, listing 7 failed guards) in
    /usr/local/lib/python3.11/inspect.py. Every one counts and gates; the standard library is where."""
    db, root = cpu
    log = next((corpus_dir(root, "2.14.1") / "ca" / "trace").glob("*.log")).read_text()
    assert log.count('"compilation_metrics": {') == 14
    recompiles = log.count('"name": "recompile_reasons"')
    skipped = log.count("Failed to handle graph break gracefully. Skipping the function and falling back to eager")
    assert (recompiles, skipped) == (4, 3)
    result = compare(reader(db), "compiler=2.13.0", "compiler=2.14.1", model="ca")
    m = result.pairs[0].metrics
    assert (m["graph_breaks"].base, m["graph_breaks"].head, m["graph_breaks"].verdict) == (1, 1, "unchanged")
    assert (m["recompiles"].base, m["recompiles"].head, m["recompiles"].verdict) == (0, recompiles, regress.REGRESSION)
    assert (m["failures"].head, m["fallbacks"].head) == (skipped, skipped)
    where = run_query(reader(db), "compile/recompile_reasons", model="ca", compiler="2.14.1+cu130")
    assert sum(r["recompiles"] for r in where) == sum(r["in_stdlib"] for r in where) == recompiles
    assert run_query(reader(db), "compile/recompile_reasons", model="ca", origin="model") == []


def kernel_names_of_phase(run_dir: Path, phase: str) -> list[str]:
    return [m.group(1) for f in sorted(run_dir.glob(f"torch_compile_debug/*/torchinductor/*_{phase}_*/output_code.py"))
            for m in KERNEL_DEF.finditer(f.read_text())]


def same_fusion(a: str, b: str) -> bool:
    """By the names alone: the same per-graph counter and the same ops once `view`, which 2.13 adds to
    fused names, is left out (cpp_fused_gelu_2 and cpp_fused_gelu_view_2)."""
    def ops(name):
        return [w for w in COUNTER.sub("", name).removeprefix("cpp_fused").split("_") if w and w != "view"]
    return COUNTER.search(a).group() == COUNTER.search(b).group() and ops(a) == ops(b)


def test_kernel_diff_pairs_renamed_fusions_across_releases(cpu):
    """2.13 adds `view` to fused kernels' names and rewrote their code: by name, 2.6.0 -> 2.13 reads
    as 13 kernels removed and 9 added. Each of the transformer's 4 forward kernels is the same fusion
    under a new name (same counter, same ops: read from the files here): all 4 pair up, none is added
    or removed. 2.13 -> 2.14.1 changes nothing."""
    db, root = cpu
    con = reader(db)
    base = kernel_names_of_phase(corpus_dir(root, "2.6.0") / "transformer", "forward")
    head = kernel_names_of_phase(corpus_dir(root, "2.13") / "transformer", "forward")
    assert len(base) == len(head) == 4
    expected = {(b, h) for b in base for h in head if same_fusion(b, h)}
    assert len(expected) == 4 and sum(b == h for b, h in expected) == 1  # only layer_norm_0 kept its name
    for head_version in ("2.13.0", "2.14.1"):
        diff = kernel_diff(con, "compiler=2.6.0", f"compiler={head_version}", "transformer")
        forward = [k for k in diff.kernels if k.generated and k.phase == "forward"]
        assert {(k.base_kernel, k.head_kernel) for k in forward} == expected, head_version
        assert {k.status for k in forward if k.base_kernel == k.head_kernel} == {CHANGED}
        assert {k.status for k in forward if k.base_kernel != k.head_kernel} == {RENAMED}
        # every 2.6.0 kernel's code differs from its 2.13 fusion's (both files read here)
        assert all(k.code_changed for k in forward)
    c = diff.counts()
    assert c["changed"] + c["renamed"] + c["removed"] == len(kernel_names(corpus_dir(root, "2.6.0") / "transformer"))
    assert c["changed"] + c["renamed"] + c["added"] == len(kernel_names(corpus_dir(root, "2.13") / "transformer"))
    res = iwh(db, "--base", "compiler=2.6.0", "--head", "compiler=2.13.0", "--model", "transformer",
              "--kernels", "--show-code")
    assert "--- base/cpp_fused_native_layer_norm_0\n+++ head/cpp_fused_native_layer_norm_0" in res.stdout
    assert "--- base/cpp_fused_gelu_2\n+++ head/cpp_fused_gelu_view_2" in res.stdout
    as_json = iwh(db, "--base", "compiler=2.6.0", "--head", "compiler=2.13.0", "--model", "transformer",
                  "--kernels", "--show-code", "--format", "json")
    codes = [c["kernel"] for c in json.loads(as_json.stdout)["kernel_diff"]["code"]]
    # one entry per pair whose code differs, named with its phase: names repeat across graphs
    assert "forward: cpp_fused_native_layer_norm_0 -> cpp_fused_native_layer_norm_0" in codes
    assert "forward: cpp_fused_gelu_2 -> cpp_fused_gelu_view_2" in codes
    same = kernel_diff(con, "compiler=2.13.0", "compiler=2.14.1", "transformer")
    assert same.counts() == {"changed": 0, "meta changed": 0, "renamed": 0, "added": 0, "removed": 0, "unchanged": 10}


def test_selectors():
    s = parse_selector("compiler=2.13.0+cpu,variant=default,mode=train")
    assert s.params == {"compiler": "2.13.0+cpu"} and s.labels == {"variant": "default", "mode": "train"}
    assert parse_selector("b6891344").params == {"run": "b6891344"}
    with pytest.raises(ValueError):
        parse_selector("variant=")


def test_selector_that_picks_nothing_says_what_to_do(cpu):
    res = iwh(cpu[0], "--base", "compiler=9.9", "--head", "compiler=2.13.0")
    assert res.exit_code != 0 and "iwh runs" in res.output


# ---- regression rules ----------------------------------------------------------------------------

def test_one_timing_sample_is_never_a_regression():
    rule = regress.DEFAULT_RULES["compile_s"]
    assert regress.judge(rule, [10.0], [30.0])[0] == regress.INSUFFICIENT
    assert regress.judge(rule, [10.0, 10.5], [30.0, 31.0])[0] == regress.REGRESSION  # min-of-N
    assert regress.judge(rule, [10.0, 10.5], [10.5, 10.9])[0] == regress.WITHIN


def test_rank_test_needs_a_significant_difference():
    rule = regress.DEFAULT_RULES["compile_s"]
    base = [10.0, 10.2, 10.1, 10.3]
    assert regress.judge(rule, base, [12.0, 12.5, 12.2, 12.4])[0] == regress.REGRESSION
    # the minimums move 12% (10.0 -> 11.2, past min-of-N's 10%) but the samples overlap: p = 0.94
    noisy_base, noisy_head = [10.0, 10.2, 10.1, 14.2, 15.5, 16.0], [11.2, 11.3, 14.0, 15.0, 13.5, 12.0]
    verdict, how = regress.judge(rule, noisy_base, noisy_head)
    assert verdict == regress.WITHIN and how.startswith("Mann-Whitney")


def test_mann_whitney_matches_scipy():
    stats = pytest.importorskip("scipy.stats")
    cases = [([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]), ([1, 2, 2, 3, 5, 5], [2, 3, 4, 4, 6]),
             ([10.0, 10.2, 10.1, 10.3], [10.15, 10.25, 10.05, 10.4])]
    for a, b in cases:
        expected = stats.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic").pvalue
        assert math.isclose(regress.mann_whitney_p(a, b), expected, rel_tol=1e-9)


def test_thresholds():
    rules = regress.parse_thresholds(["kernels=2", "compile_s=5%", "fusion_rate=off"])
    assert regress.judge(rules["kernels"], [10], [12])[0] == regress.WITHIN
    assert regress.judge(rules["kernels"], [10], [13])[0] == regress.REGRESSION
    assert regress.judge(rules["fusion_rate"], [0.4], [0.3])[0] == regress.NOT_GATED
    assert rules["compile_s"].threshold == 0.05 and rules["compile_s"].relative
    assert regress.judge(regress.DEFAULT_RULES["fusion_rate"], [0.4], [0.3])[0] == regress.REGRESSION
    with pytest.raises(ValueError):
        regress.parse_thresholds(["kernals=1"])


# ---- GPU corpus ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gpu(tmp_path_factory) -> tuple[str, Path]:
    from tests.conftest import unpacked_corpus

    local = unpacked_corpus("gpu-h200-torch2.11.tar.xz") / "gpu-h200-torch2.11"
    db = str(tmp_path_factory.mktemp("compare_gpu") / "wh.duckdb")
    ingest_paths([str(local / r) for r in GPU_RUNS], db, jobs=2)
    return db, local


@pytest.mark.corpus
def test_gpu_variants_pair_like_for_like(gpu):
    db, root = gpu
    con = reader(db)
    result = compare(con, "variant=default", "variant=aggressive_fusion")
    assert [(p.model, p.config) for p in result.pairs] == [
        ("hf_bert", {"dtype": "fp32", "mode": "infer"}), ("hf_bert", {"dtype": "fp32", "mode": "train"})]
    assert result.base_only == ["hf_bert [dtype=bf16 mode=infer]"] and not result.head_only
    per_graph = dict(con.execute("""
        SELECT r.labels ->> 'mode' || '/' || (r.labels ->> 'variant'), sum(g.kernel_count)
        FROM graphs g JOIN runs r USING (run_id) WHERE r.labels ->> 'dtype' = 'fp32' GROUP BY ALL""").fetchall())
    for p in result.pairs:
        mode = p.config["mode"]
        base = len(kernel_names(root / f"hf_bert__{mode}__fp32__default"))
        head = len(kernel_names(root / f"hf_bert__{mode}__fp32__aggressive_fusion"))
        assert (p.metrics["kernels"].base, p.metrics["kernels"].head) == (base, head)
        assert (base, head) == (per_graph[f"{mode}/default"], per_graph[f"{mode}/aggressive_fusion"])
    assert any("aggressive_fusion" in w for w in result.warnings)


@pytest.mark.corpus
def test_gpu_kernel_diff_hf_bert(gpu):
    """aggressive_fusion leaves hf_bert's training graphs alone: the two output_code.py files differ
    only in their `# kernel path:` comments (temporary folder names), so every kernel is unchanged."""
    db, root = gpu
    texts = {}
    for variant in ("default", "aggressive_fusion"):
        files = sorted((root / f"hf_bert__train__fp32__{variant}").glob("torch_compile_debug/*/torchinductor/*/output_code.py"))
        texts[variant] = [line for f in files for line in f.read_text().splitlines()
                          if not line.startswith("# kernel path:")]
    assert not list(difflib.unified_diff(texts["default"], texts["aggressive_fusion"]))
    n = len(kernel_names(root / "hf_bert__train__fp32__default"))
    con = reader(db)
    # the head selector leaves the mode open: the head's training run pairs with the base's
    diff = kernel_diff(con, "variant=default,mode=train,dtype=fp32", "variant=aggressive_fusion", "hf_bert")
    [(mode,)] = con.execute("SELECT labels ->> 'mode' FROM runs WHERE run_id = ?", [diff.head_run]).fetchall()
    assert mode == "train"
    assert diff.counts() == {"added": 0, "removed": 0, "changed": 0, "meta changed": 0, "renamed": 0, "unchanged": n}
    assert all(k.status == SAME for k in diff.kernels) and not diff.fusions


def test_a_release_family_selector_picks_every_build_of_it_and_no_other(cpu):
    """compiler=2.13 is any 2.13.x build, compiler=2.1 is no 2.13 or 2.14 build (part boundary)."""
    db, root = cpu
    con = reader(db)
    versions = dict(con.execute("SELECT compiler_version, count(*) FROM runs GROUP BY ALL").fetchall())
    assert versions == {"2.6.0+cu124": 5, "2.13.0+cpu": 5, "2.14.1+cu130": 5}
    for selector, want in (("2.13", {"2.13.0+cpu"}), ("2.13.0", {"2.13.0+cpu"}), ("2.13.0+cpu", {"2.13.0+cpu"}),
                           ("2.14", {"2.14.1+cu130"}), ("2", set(versions)), ("2.6", {"2.6.0+cu124"})):
        rows = con.execute("SELECT DISTINCT compiler_version FROM runs WHERE version_matches(compiler_version, ?)",
                           [selector]).fetchall()
        assert {r[0] for r in rows} == want, selector
    result = compare(con, "compiler=2.13", "compiler=2.14")
    assert len(result.pairs) == 5
    for bad in ("2.1", "2.13.1", "2.6.0+cu1"):
        res = iwh(db, "--base", f"compiler={bad}", "--head", "compiler=2.14")
        # a selector that picks nothing is a usage or data error (2), never a regression (1)
        assert res.exit_code == 2 and f"'compiler={bad}' picks no runs" in res.output, res.output


def test_an_empty_selector_names_the_nearest_existing_values(cpu):
    db, _ = cpu
    res = iwh(db, "--base", "compiler=2.15", "--head", "compiler=2.14")
    assert "no run has compiler=2.15; nearest: 2.14.1+cu130, 2.13.0+cpu, 2.6.0+cu124" in res.output
    res = iwh(db, "--base", "compiler=2.13,model=mpl", "--head", "compiler=2.14")
    assert "no run has model=mpl; nearest: mlp" in res.output
    # each part matches runs alone; only together do they pick none
    res = iwh(db, "--base", "compiler=2.6,model=mlp,run=ffff", "--head", "compiler=2.14")
    assert "no run id starts with 'ffff'" in res.output
    res = iwh(db, "--base", "compiler=2.13,variant=x", "--head", "compiler=2.14")
    assert "no run has a 'variant' label" in res.output


def test_config_keys_of_one_release_are_notes_and_differing_values_warnings(cpu):
    """The 2.14.1 config has keys 2.13 lacks and the other way round: a release difference, listed
    apart; keys on both sides whose values differ stay a warning. Counted from the records here."""
    db, _ = cpu
    con = reader(db)
    configs = {}
    for version, text in con.execute("""
            SELECT r.compiler_version, c.inductor_config FROM compilations c JOIN runs r USING (run_id)
            WHERE r.model = 'mlp' AND c.inductor_config IS NOT NULL ORDER BY c.start_time_us""").fetchall():
        configs.setdefault(version, json.loads(text))
    b, h = configs["2.13.0+cpu"], configs["2.14.1+cu130"]
    added, removed = sorted(h.keys() - b.keys()), sorted(b.keys() - h.keys())
    assert added and removed
    result = compare(con, "compiler=2.13,model=mlp", "compiler=2.14,model=mlp")
    [note_added] = [n for n in result.notes if "new in the head" in n]
    [note_removed] = [n for n in result.notes if "removed in the head" in n]
    assert f"{len(added)} keys" in note_added and f"{len(removed)} keys" in note_removed
    assert all(k in note_removed for k in removed)
    [warning] = [w for w in result.warnings if "inductor config differs" in w]
    # values that differ only by where the run or its virtualenv lay are not settings
    differing = {k for k in b.keys() & h.keys() if b[k] != h[k]}
    paths = {k for k in differing if isinstance(b[k], str) and b[k].startswith("/")
             and b[k].rsplit("/", 1)[-1] == h[k].rsplit("/", 1)[-1]}
    assert paths, "the 2.13 and 2.14.1 runs lay in different folders"
    assert f"in {len(differing - paths)} keys" in warning
    assert not any(k in warning for k in paths) and not any(k in warning for k in added)


def test_autotune_winners_pair_by_choice_less_its_counter(tmp_path):
    """The kernel diff pairs autotune winners by the choice the warehouse names without its per-graph
    counter (compare/autotune's choice_kind): triton_mm_12 in one run is triton_mm_3 in another."""
    from inductor_warehouse.analysis.kernel_diff import _autotune_changes
    from inductor_warehouse.analysis.canned_rows import run_query
    from tests.conftest import FIXTURES

    db = str(tmp_path / "wh.duckdb")
    ingest_paths([str(FIXTURES / "runs" / "gpu-torch2.11" / "mlp__infer__bf16__max_autotune")], db)
    con = reader(db)
    run = con.execute("SELECT run_id FROM runs").fetchone()[0]
    base = run_query(con, "compare/autotune", run=run)
    con.close()
    assert base and all(r["choice_kind"] == COUNTER.sub("", r["choice"]) for r in base)
    assert any(r["choice_kind"] != r["choice"] for r in base)  # some winners are numbered templates
    renumbered = [dict(r, choice=r["choice_kind"] + "_99") if r["choice_kind"] != r["choice"] else r for r in base]
    assert {c.status for c in _autotune_changes(base, renumbered)} == {SAME}
    retuned = [dict(base[0], config=(base[0]["config"] or "") + ", num_warps=16"), *base[1:]]
    assert [c.status for c in _autotune_changes(base, retuned)].count(CHANGED) == 1


def test_kernel_diff_says_which_runs_it_diffed(cpu):
    """A side with several runs of the workload: the diff takes the earliest and says so, naming the
    workload and both runs."""
    db, _ = cpu
    con = reader(db)
    diff = kernel_diff(con, "compiler=2.13", "compiler=2", "transformer")  # 2: every release, three runs
    con.close()
    assert diff.notes == [f"1 base and 3 head runs of transformer: diffing {diff.base_run} and {diff.head_run} "
                          "(give run ids to choose)"]
