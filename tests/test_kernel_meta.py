"""A kernel whose code differs only in its metadata is `meta changed`, apart from `changed`, and its
code diff is hidden unless asked for: the benchmark harness's GPU captures of mobilenetv2_100, with
Inductor's default config and with `triton.autotune_pointwise=False` (tests/fixtures/SOURCES.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from inductor_warehouse.analysis.kernel_diff import kernel_diff, without_meta
from inductor_warehouse.cli.main import cli
from tests.conftest import reader

MODEL = "mobilenetv2_100"
KERNEL = re.compile(r"^(triton_\w+) = async_compile\.triton\('\w+', '''\n(.*?)^''', device_str", re.M | re.S)


@pytest.fixture(scope="module")
def gpu(tmp_path_factory):
    import tarfile

    from inductor_warehouse.ingest.load import ingest_paths
    from tests.conftest import HARNESS_CAPTURES

    root = tmp_path_factory.mktemp("meta")
    with tarfile.open(HARNESS_CAPTURES) as tf:
        tf.extractall(root, filter="data", members=[m for m in tf.getmembers() if m.name.startswith("gpu-torch2.11/")])
    runs = [root / "gpu-torch2.11" / variant / "performance" / MODEL for variant in ("default", "single_config")]
    db = str(root / "wh.duckdb")
    ingest_paths(runs, db)
    return db, runs


def _kernels(run: Path) -> dict[str, tuple[str, str]]:
    """Each Triton kernel of the run's output code: (its decorator's text, the code from @triton.jit on)."""
    out = {}
    for f in run.glob("torch_compile_debug/*/torchinductor/*/output_code.py"):
        for name, body in KERNEL.findall(f.read_text()):
            head, _, code = body.partition("@triton.jit")
            out[name] = (head[head.index("@triton_heuristics"):], code)
    return out


def test_metadata_alone_is_meta_changed_and_kept_out_of_the_code_diff(gpu):
    db, (default, single) = gpu
    a, b = _kernels(default), _kernels(single)
    same_code = {k for k in a.keys() & b.keys() if a[k][1] == b[k][1]}
    meta_only = {k for k in same_code if a[k][0] != b[k][0]}
    assert meta_only and all("autotune_pointwise" in b[k][0] for k in meta_only)
    with reader(db) as con:
        diff = kernel_diff(con, "variant=default", "variant=single_config", MODEL)
    got = {k.head_kernel for k in diff.kernels if k.status == "meta changed"}
    assert got == meta_only
    assert diff.code_changes == [] and len(diff.meta_changes) == len(meta_only)
    args = ["--db", db, "compare", "--base", "variant=default", "--head", "variant=single_config", "--model", MODEL,
            "--kernels", "--show-code"]
    hidden, shown = CliRunner().invoke(cli, args), CliRunner().invoke(cli, [*args, "--show-meta"])
    assert f"{len(meta_only)} meta changed" in hidden.stdout and "code diff:" not in hidden.stdout
    assert shown.stdout.count("code diff:") == len(meta_only) and "inductor_meta" in shown.stdout


def test_without_meta_keeps_what_the_kernel_computes():
    src = ("@triton_heuristics.pointwise(\n    size_hints={'x': 1024}, filename=__file__,\n"
           "    triton_meta={'signature': {'in_ptr0': '*fp32'}, 'constants': {}},\n"
           "    inductor_meta={'kernel_name': 'k', 'autotune_pointwise': False, 'hints': {'a': {'b': 1}}},\n"
           "    min_elem_per_thread=0\n)\n@triton.jit\ndef k(in_ptr0, xnumel, XBLOCK : tl.constexpr):\n    pass\n")
    other = src.replace("'autotune_pointwise': False", "'autotune_pointwise': True")
    assert without_meta(src) == without_meta(other)
    assert "min_elem_per_thread=0" in without_meta(src) and "def k(in_ptr0" in without_meta(src)
    assert without_meta(src) != without_meta(src.replace("pass", "tl.store(out, 1)"))
