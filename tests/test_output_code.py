"""output_code parser on real Inductor wrapper files (C++ and Triton)."""

from __future__ import annotations

import re

import orjson
import pytest

from inductor_warehouse.ingest.normalize import normalize_kernel_source
from inductor_warehouse.ingest.parsers.output_code import parse_output_code
from tests.conftest import FIXTURES, GPU_TRAIN_RUN, fixture_files, unpacked_corpus

TREE = FIXTURES / "debug_tree"
CODE_FILES = fixture_files("output_code.py")
GPU_FWD = GPU_TRAIN_RUN / (
    "torch_compile_debug/run_2026_11_22_00_02_07_627292-pid_4247/"
    "torchinductor/model__0_forward_1.0/output_code.py"
)
T_26 = TREE / (
    "cpu-2.6.0-transformer/torch_compile_debug/run_2026_11_22_00_03_10_696637-pid_16591/torchinductor/"
    "model__0_forward_1.0/output_code.py"
)
CNN_13 = TREE / (
    "cpu-2.13-cnn/torch_compile_debug/run_2026_11_22_00_09_54_918928-pid_19048/torchinductor/"
    "model__0_backward_3.1/output_code.py"
)
ARCHIVES = ("cpu-torch2.6.0.tar.xz", "cpu-torch2.13.tar.xz", "cpu-torch2.14.1.tar.xz", "gpu-h200-torch2.11.tar.xz")
DEFINITION = re.compile(r"^(\w+) = async_compile\.(?!wait\()\w+\(", re.M)
IR_EXTERN = re.compile(r"^\w+\.node\.kernel = (?!None$)(.+)$", re.M)


def _parse(path):
    parsed = parse_output_code(path.read_text())
    assert parsed.problems == [], path
    return parsed


def _check_against_grep_and_ir(path):
    """Generated kernels = definition lines; extern call sites = extern nodes of ir_post_fusion.txt."""
    text = path.read_text()
    parsed = parse_output_code(text)
    assert parsed.problems == [], path
    kernels = parsed.rows["kernels"]
    generated = [k["kernel_name"] for k in kernels if k["generated"]]
    assert generated == DEFINITION.findall(text), path
    ir = (path.parent / "ir_post_fusion.txt").read_text()
    assert sorted(k["kernel_name"] for k in kernels if not k["generated"]) == sorted(IR_EXTERN.findall(ir)), path


@pytest.mark.parametrize("path", CODE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_kernels_match_definitions_and_ir_externs(path):
    _check_against_grep_and_ir(path)


def test_triton_graph_exact_rows():
    parsed = _parse(GPU_FWD)
    launches = parsed.facts.pop("call_buffers")
    # its Triton kernels' inductor_meta say the run forced caches off
    assert "'force_disable_caches': True" in GPU_FWD.read_text()
    assert parsed.facts == {"aot_id": 0, "phase": "forward", "device": "cuda", "backend": "triton", "partitions": 0,
                            "caches_said": ("off", "output code: inductor_meta force_disable_caches=True")}
    # launches in call order, with the buffers each passes, as grep reads them off `.run(` lines
    text = GPU_FWD.read_text()
    expected = [(m[0], re.findall(r"\bbuf\d+\b", m[1])) for m in re.findall(r"^\s+(\w+)\.run\((.*)$", text, re.M)]
    assert launches == expected and launches
    rows = parsed.rows["kernels"]
    gelu = rows[0]
    assert len(gelu["source"]) > 0 and gelu["source_hash"]
    assert {k: v for k, v in gelu.items() if k not in ("source", "source_hash")} == {
        "kernel_name": "triton_poi_fused_gelu_0", "generated": True, "backend": "triton", "category": "pointwise",
        "aten_ops": ["aten.gelu"], "source_nodes": ["input_2"], "num_load": 1, "num_store": 1, "num_reduction": 0,
        "size_hints": '{"x":8192}', "signature": "triton_poi_fused_gelu", "site": 0, "debug_handle": 2,
        "line": 49, "details": '{"grid_type":"Grid1D","mutated_arg_names":[],"calls":1}',
    }
    # line 86: `# Topologically Sorted Source Nodes: [, input_4], Original ATen: [aten.addmm, aten.relu]`
    relu = rows[1]
    assert (relu["source_nodes"], relu["aten_ops"], relu["debug_handle"], relu["line"]) == (
        ["input_4"], ["aten.addmm", "aten.relu"], 4, 96)
    assert orjson.loads(relu["details"])["mutated_arg_names"] == ["in_out_ptr0"]
    externs = [(k["kernel_name"], k["site"], k["debug_handle"], k["line"], k["source_nodes"]) for k in rows[2:]]
    # lines 157, 168, 178 of the file, after `# [Provenance debug handles] <name>:1|3|5`
    assert externs == [
        ("extern_kernels.addmm", 0, 1, 157, ["input_1"]),
        ("extern_kernels.mm", 1, 3, 168, ["input_3"]),
        ("extern_kernels.addmm", 2, 5, 178, ["input_5"]),
    ]
    assert all(k["backend"] == k["category"] == "extern" and k["signature"] == k["kernel_name"] for k in rows[2:])
    assert all(k["source_hash"] is None and k["aten_ops"] == ["aten.t", "aten.addmm"] for k in rows[2:])


def test_torch_26_cpp_kernels_and_module_level_call():
    parsed = _parse(T_26)
    assert [name for name, _ in parsed.facts.pop("call_buffers")] == re.findall(
        r"^\s+(cpp_fused_\w+)\(", T_26.read_text(), re.M)
    assert parsed.facts == {"aot_id": 0, "phase": "forward", "device": "cpu", "backend": "cpp", "partitions": 0}
    rows = parsed.rows["kernels"]
    generated = [(k["kernel_name"], k["category"], k["line"]) for k in rows if k["generated"]]
    # layer norms and mean keep `tmp_acc` accumulators; gelu does not
    assert generated == [
        ("cpp_fused_native_layer_norm_0", "reduction", 30),
        ("cpp_fused_add_native_layer_norm_1", "reduction", 115),
        ("cpp_fused_gelu_2", "pointwise", 205),
        ("cpp_fused_add_mean_mul_pow_3", "reduction", 242),
    ]
    assert all(k["aten_ops"] is None and k["debug_handle"] is None for k in rows if k["generated"])
    # `def call(args):` at module level in 2.6; no provenance handles yet
    externs = [(k["kernel_name"], k["source_nodes"], k["line"]) for k in rows if not k["generated"]]
    assert externs == [
        ("extern_kernels.addmm", ["linear"], 335),
        ("torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default", ["y"], 338),
        ("extern_kernels.addmm", ["linear_1"], 344),
        ("extern_kernels.addmm", ["linear_2"], 354),
        ("extern_kernels.addmm", ["linear_3"], 360),
    ]
    # the 2.6 C++ source includes a header by its absolute cache path
    source = rows[0]["source"]
    assert '#include "/tmp/torchinductor_user/' in source
    assert '#include "<path>"' in normalize_kernel_source(source, rows[0]["kernel_name"])


def test_aten_shorthand_fallback_and_convolution_backward():
    rows = [k for k in _parse(CNN_13).rows["kernels"] if not k["generated"]]
    # line 599: `aten.scatter_reduce_.two(buf12,1,buf14,buf15, ...)`, emitted with no comment of its own
    scatter = next(k for k in rows if k["kernel_name"] == "aten.scatter_reduce_.two")
    assert (scatter["line"], scatter["debug_handle"], scatter["aten_ops"]) == (599, None, None)
    conv = [k for k in rows if k["kernel_name"] == "torch.ops.aten.convolution_backward.default"]
    assert [(k["line"], k["debug_handle"]) for k in conv] == [(580, 5), (625, 8)]


def test_truncated_file_keeps_complete_kernels():
    parsed = parse_output_code((FIXTURES / "broken/truncated_output_code/output_code.py").read_text())
    rows = parsed.rows["kernels"]
    assert [k["kernel_name"] for k in rows] == ["triton_poi_fused_gelu_0", "triton_poi_fused_addmm_relu_1"]
    assert rows[0]["source_hash"] and rows[0]["source"]
    assert rows[1]["source"] is None and rows[1]["source_hash"] is None
    messages = [p.message for p in parsed.problems]
    assert len(messages) == 2
    assert "triton_poi_fused_addmm_relu_1" in messages[0] and "never closed" in messages[0]
    assert "def call(" in messages[1]


def test_binary_garbage_is_a_problem_not_an_exception():
    text = (FIXTURES / "broken/binary_output_code/output_code.py").read_bytes().decode("utf-8", "replace")
    parsed = parse_output_code(text)
    assert parsed.rows["kernels"] == [] and parsed.facts == {}
    assert len(parsed.problems) == 1


@pytest.mark.corpus
@pytest.mark.parametrize("archive", ARCHIVES)
def test_every_corpus_graph(archive):
    files = sorted(unpacked_corpus(archive).rglob("output_code.py"))
    assert files
    for path in files:
        _check_against_grep_and_ir(path)


@pytest.mark.corpus
def test_same_kernel_in_two_releases_hashes_equal():
    def generated(archive):
        root = unpacked_corpus(archive)
        path = next(root.rglob("transformer/**/model__0_forward_1.0/output_code.py"))
        return [k for k in parse_output_code(path.read_text()).rows["kernels"] if k["generated"]]

    old, new = generated("cpu-torch2.13.tar.xz"), generated("cpu-torch2.14.1.tar.xz")
    assert [k["kernel_name"] for k in old] == [k["kernel_name"] for k in new]
    assert [k["source_hash"] for k in old] == [k["source_hash"] for k in new]


@pytest.mark.corpus
def test_cache_paths_do_not_change_the_hash():
    root = unpacked_corpus("cpu-torch2.6.0.tar.xz")
    # two graphs of the 2.6 ca run define cpp_fused_0, whose #include paths name different cache dirs
    first, second = (
        next(k for k in parse_output_code(next(root.rglob(f"ca/**/{g}/output_code.py")).read_text()).rows["kernels"]
             if k["kernel_name"] == "cpp_fused_0")
        for g in ("model__1_inference_3.1", "model__2_inference_4.2")
    )
    assert first["source"] != second["source"]
    assert first["source_hash"] == second["source_hash"]
