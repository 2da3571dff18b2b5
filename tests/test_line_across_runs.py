"""One model line across releases, on the bundled CPU corpora (torch 2.6.0, 2.13.0, 2.14.1; five
models each): lineage/line_across_runs, lineage/model_lines and `iwh compare --lineage FILE:LINE`.

What a line became is read here from each run's TORCH_TRACE log (the innermost gen_models.py frame
of each kernel's provenance stack traces), never from the code under test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from inductor_warehouse.analysis.kernel_diff import kernel_diff
from inductor_warehouse.analysis.line_diff import line_diff, parse_location
from inductor_warehouse.analysis.canned_rows import run_query
from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.store.api import Warehouse
from tests.conftest import kernel_stack_frames, unpack_cpu_corpora

LINE = 28  # `x = x + s.fc2(F.gelu(s.fc1(s.ln2(x))))`: layer norm, two linears and a gelu, fused differently by release


@pytest.fixture(scope="module")
def cpu(tmp_path_factory):
    root = tmp_path_factory.mktemp("lines_cpu")
    unpack_cpu_corpora(root)
    db = str(root / "wh.duckdb")
    ingest_paths([str(root)], db)
    with Warehouse(db) as w:
        yield w, root, db


def run_dir(root: Path, version: str, model: str = "transformer") -> Path:
    """A release's run folder (the archives name 2.13.0's folder cpu-torch2.13)."""
    folder = version.removesuffix(".0") if version == "2.13.0" else version
    return next(root.glob(f"*/cpu-torch{folder}/{model}"))


def line_kernels(run: Path) -> dict[int, set[str]]:
    """model line -> kernels whose provenance stack traces end there, from the run's trace log."""
    out: dict[int, set[str]] = {}
    for kernel, frames in kernel_stack_frames(next((run / "trace").glob("*.log"))):
        model = [line for file, line in frames if file.endswith("gen_models.py")]
        if model:
            out.setdefault(model[-1], set()).add(kernel)
    return out


def run_id(w, version: str, model: str = "transformer") -> str:
    return w.sql("SELECT run_id FROM runs WHERE model = ? AND starts_with(compiler_version, ?)", [model, version]).rows()[0][0]


def test_line_across_runs_lists_each_runs_kernels_of_the_line(cpu):
    w, root, _ = cpu
    rows = run_query(w, "lineage/line_across_runs", file="gen_models.py", line=LINE, model="transformer")
    by_run: dict[str, set[str]] = {}
    for r in rows:
        by_run.setdefault(r["compiler_version"], set()).add(r["kernel_name"])
    for version in ("2.13.0", "2.14.1"):
        expected = line_kernels(run_dir(root, version))[LINE]
        assert by_run[next(v for v in by_run if v.startswith(version))] == expected and len(expected) >= 5
    assert not any(v.startswith("2.6.0") for v in by_run)  # 2.6 recorded no provenance
    # one row per (run, graph, kernel), the kernel's own facts beside it
    assert all(r["file"].endswith("gen_models.py") and r["line"] == LINE for r in rows)
    assert {r["category"] for r in rows if r["generated"]} <= {"pointwise", "reduction", "persistent_reduction"}


def test_model_lines_per_run_and_against_a_base(cpu):
    w, root, _ = cpu
    head, base = run_id(w, "2.14.1"), run_id(w, "2.13.0")
    expected = line_kernels(run_dir(root, "2.14.1"))
    rows = run_query(w, "lineage/model_lines", run=head)
    assert {r["line"]: r["kernels"] for r in rows} == {n: len(ks) for n, ks in expected.items()}
    assert all(r["kernel_us"] is None for r in rows)  # a CPU run: no kernel events in its profile
    both = run_query(w, "lineage/model_lines", run=head, base=base)
    base_expected = line_kernels(run_dir(root, "2.13.0"))
    for r in both:
        assert r["base_kernels"] == len(base_expected.get(r["line"], ())) or (
            r["base_kernels"] is None and r["line"] not in base_expected)
        assert r["kernels_delta"] == r["kernels"] - (r["base_kernels"] or 0)


def test_renamed_fusions_of_a_line_pair_across_releases(cpu):
    """2.6.0 -> 2.13.0: 2.6 has no provenance, so its side of the line is what the kernel diff pairs
    with 2.13's kernels of the line; the renamed fusions (2.13 adds layout ops to the names:
    cpp_fused_gelu_2 -> cpp_fused_gelu_view_2) pair up, as `iwh compare --kernels` pairs them."""
    w, root, db = cpu
    result = line_diff(w, "compiler=2.6.0", "compiler=2.13.0", "transformer", "gen_models.py", LINE)
    head_line = line_kernels(run_dir(root, "2.13.0"))[LINE]
    generated = {k for k in head_line if not k.startswith(("extern_kernels.", "torch.ops."))}
    assert {k.change.head_kernel for k in result.kernels} == generated
    pairs = {(k.change.base_kernel, k.change.head_kernel): k for k in result.kernels}
    assert ("cpp_fused_gelu_2", "cpp_fused_gelu_view_2") in pairs
    diff = kernel_diff(w, "compiler=2.6.0", "compiler=2.13.0", "transformer")
    whole = {(c.base_kernel, c.head_kernel, c.status) for c in diff.kernels}
    assert {(b, h, k.status) for (b, h), k in pairs.items()} <= whole
    assert all(k.on_line == "head" for k in result.kernels)
    assert any("has no provenance" in n for n in result.notes)

    out = CliRunner().invoke(cli, ["--db", db, "compare", "--base", "compiler=2.6.0", "--head", "compiler=2.13.0",
                                   "--model", "transformer", "--lineage", f"gen_models.py:{LINE}"])
    assert out.exit_code == 0, out.output
    assert "x = x + s.fc2(F.gelu(s.fc1(s.ln2(x))))" in out.output
    table = [line.split() for line in out.output.splitlines() if line.startswith(("renamed", "changed", "unchanged"))]
    assert ["renamed", "forward", "pointwise", "cpp_fused_gelu_2", "cpp_fused_gelu_view_2"] in [t[:5] for t in table]
    assert len(table) == len(generated)


def test_the_same_line_in_two_releases_with_provenance(cpu):
    w, root, db = cpu
    result = line_diff(w, "compiler=2.13.0", "compiler=2.14.1", "transformer", "gen_models.py", 21)
    b, h = (line_kernels(run_dir(root, v))[21] for v in ("2.13.0", "2.14.1"))
    assert {k.change.base_kernel for k in result.kernels} == {k for k in b if k.startswith("cpp_")}
    assert {k.change.head_kernel for k in result.kernels} == {k for k in h if k.startswith("cpp_")}
    assert all(k.on_line == "both" for k in result.kernels)
    out = CliRunner().invoke(cli, ["--db", db, "compare", "--base", "compiler=2.13.0", "--head", "compiler=2.14.1",
                                   "--model", "transformer", "--lineage", "gen_models.py:21", "--format", "json"])
    assert {(r["base_kernel"], r["head_kernel"]) for r in json.loads(out.stdout)} == {
        (k.change.base_kernel, k.change.head_kernel) for k in result.kernels}


def test_a_location_is_file_colon_line():
    assert parse_location("models/gen_models.py:28") == ("models/gen_models.py", 28)
    for bad in ("gen_models.py", "gen_models.py:x", ":28"):
        with pytest.raises(ValueError):
            parse_location(bad)
    out = CliRunner().invoke(cli, ["compare", "--base", "a", "--head", "b", "--lineage", "x.py:1"])
    assert out.exit_code != 0 and "--lineage needs --model" in out.output
