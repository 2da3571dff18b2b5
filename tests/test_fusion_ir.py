"""fusion_ir parser on real ir_pre_fusion.txt / ir_post_fusion.txt files."""

from __future__ import annotations

import json
import re

import pytest

from inductor_warehouse.ingest.parsers.fusion_ir import parse_fusion_ir
from tests.conftest import FIXTURES, GPU_TRAIN_RUN, fixture_files, unpacked_corpus

TREE = FIXTURES / "debug_tree"
GPU_RUN = GPU_TRAIN_RUN
GPU_GRAPHS = GPU_RUN / "torch_compile_debug/run_2026_11_22_00_02_07_627292-pid_4247/torchinductor"
T_141 = TREE / "cpu-2.14.1-transformer/torch_compile_debug/run_2026_11_21_23_59_30_982852-pid_14091/torchinductor"
CNN_13 = TREE / "cpu-2.13-cnn/torch_compile_debug/run_2026_11_22_00_09_54_918928-pid_19048/torchinductor"
DYN_13 = TREE / "cpu-2.13-dynamic/torch_compile_debug/run_2026_11_22_00_09_17_736866-pid_18849/torchinductor"
IR_FILES = fixture_files("ir_p*_fusion.txt")
ARCHIVES = ("cpu-torch2.6.0.tar.xz", "cpu-torch2.13.tar.xz", "cpu-torch2.14.1.tar.xz", "gpu-h200-torch2.11.tar.xz")


def _top_level_by_grep(text: str) -> int:
    """Every header line is a node; each `.snodes[i] =` line announces a member header, not a node."""
    headers = len(re.findall(r"^\w+: \w+\([\w,]*\)$", text, re.M))
    return headers - len(re.findall(r"^\w+\.snodes\[\d+\] =$", text, re.M))


def _layout_names_by_grep(text: str) -> set[str]:
    return set(re.findall(r"^\s*(\w+?)(?:\.layout|_layout) = ", text, re.M))


def _parse(path):
    parsed = parse_fusion_ir(path.read_text())
    assert parsed.problems == [], path
    return parsed


@pytest.mark.parametrize("path", IR_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_top_level_nodes_and_layouts_match_grep(path):
    text = path.read_text()
    parsed = _parse(path)
    if path.name == "ir_pre_fusion.txt":
        assert parsed.facts["top_level_nodes"] == len(re.findall(r"^op\d+: ", text, re.M))
    assert parsed.facts["top_level_nodes"] == len(parsed.rows["fusions"]) == _top_level_by_grep(text)
    layouts = parsed.rows["layouts"]
    assert len(layouts) == len({row["buffer"] for row in layouts})  # one row per buffer
    assert {row["buffer"] for row in layouts} == _layout_names_by_grep(text)


def test_gpu_pre_fusion_nodes_equal_ground_truth():
    truth = json.loads((GPU_RUN / "ground_truth.json").read_text())["ir_nodes_pre_fusion"]
    total = sum(_parse(p).facts["top_level_nodes"] for p in GPU_GRAPHS.glob("*/ir_pre_fusion.txt"))
    assert truth == 15 and total == truth


def test_fused_nodes_list_members_not_as_top_level_nodes():
    rows = _parse(GPU_GRAPHS / "model__0_backward_3.1/ir_post_fusion.txt").rows["fusions"]
    # headers of the file, members after `snodes[i] =` left out
    assert [r["group_name"] for r in rows] == ["op0", "op1", "op2", "op3_op6", "op4", "op5", "op7_op9", "op8"]
    fused = rows[3]
    assert fused == {
        "group_name": "op3_op6", "node_class": "FusedSchedulerNode", "member_count": 2,
        "members": ["op3", "op6"], "kernel_name": None, "inner_classes": ["SchedulerNode", "SchedulerNode"],
        "buffers": ["buf3", "buf6"],
    }
    assert rows[0]["kernel_name"] == "extern_kernels.mm" and rows[0]["inner_classes"] == ["ExternKernelOut"]
    assert rows[2]["members"] == ["op2"] and rows[2]["member_count"] == 1


def test_outer_loop_fusion_fallback_kernel_and_multi_output():
    parsed = _parse(T_141 / "model__0_forward_1.0/ir_post_fusion.txt")
    rows = {r["group_name"]: r for r in parsed.rows["fusions"]}
    outer = rows["op0_op1_op2_op3_op4"]
    assert outer["node_class"] == "OuterLoopFusedSchedulerNode" and outer["member_count"] == 5
    assert outer["members"] == ["op0", "op1", "op2", "op3", "op4"]
    assert outer["buffers"] == ["buf0", "buf1", "buf2", "buf3", "buf4"]
    assert rows["op6"]["kernel_name"] == "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default"
    assert (rows["op7"]["inner_classes"], rows["op7"]["kernel_name"]) == (["MultiOutput"], None)
    layouts = {r["buffer"]: r for r in parsed.rows["layouts"]}
    # `buf0.layout = FixedLayout('cpu', torch.float32, size=[4, 16, 1], stride=[16, 1, 64])`
    assert layouts["buf0"] == {
        "buffer": "buf0", "layout_kind": "FixedLayout", "device": "cpu", "dtype": "float32",
        "size": ["4", "16", "1"], "stride": ["16", "1", "64"], "offset": None, "ir_class": "ComputedBuffer",
    }
    # graph inputs come from `primals_1_layout = ...` lines
    assert layouts["primals_1"]["size"] == ["4", "16", "64"] and layouts["primals_1"]["ir_class"] is None
    assert layouts["buf6"]["layout_kind"] == "MultiOutputLayout" and layouts["buf6"]["device"] == "cpu"
    assert layouts["buf6"]["ir_class"] == "FallbackKernel"


def test_symbolic_sizes_and_none_layout():
    layouts = {r["buffer"]: r for r in _parse(DYN_13 / "model__3_backward_9.6/ir_post_fusion.txt").rows["layouts"]}
    # `buf0.layout = FixedLayout('cpu', torch.float32, size=[s77, s27, 64], stride=[64*s27, 64, 1])`
    assert (layouts["buf0"]["size"], layouts["buf0"]["stride"]) == (["s77", "s27", "64"], ["64*s27", "64", "1"])
    assert layouts["addmm"]["size"] == ["s27*s77", "64"]
    cnn = {r["buffer"]: r for r in _parse(CNN_13 / "model__0_backward_3.1/ir_post_fusion.txt").rows["layouts"]}
    # `buf16: ScatterFallback` / `buf16.layout = NoneLayout(device=device(type='cpu'), size=[0], stride=[0])`
    assert cnn["buf16"] == {
        "buffer": "buf16", "layout_kind": "NoneLayout", "device": "cpu", "dtype": None, "size": ["0"],
        "stride": ["0"], "offset": None, "ir_class": "ScatterFallback",
    }


def test_gpu_device_index_is_kept():
    layouts = _parse(GPU_GRAPHS / "model__0_forward_1.0/ir_post_fusion.txt").rows["layouts"]
    assert {r["device"] for r in layouts} == {"cuda:0"}


def test_cut_record_keeps_earlier_nodes_and_reports_problem():
    parsed = parse_fusion_ir((FIXTURES / "broken/cut_ir/ir_post_fusion.txt").read_text())
    assert [r["group_name"] for r in parsed.rows["fusions"]] == ["op0", "op1", "op2"]
    assert parsed.rows["fusions"][0]["kernel_name"] == "extern_kernels.addmm"
    assert "buf2" in {r["buffer"] for r in parsed.rows["layouts"]}
    assert len(parsed.problems) == 1 and "outputs" in parsed.problems[0].message


def test_garbage_is_a_problem_not_an_exception():
    parsed = parse_fusion_ir((FIXTURES / "broken/binary_output_code/output_code.py").read_bytes().decode("utf-8", "replace"))
    assert parsed.rows["fusions"] == [] and parsed.problems


@pytest.mark.corpus
@pytest.mark.parametrize("archive", ARCHIVES)
def test_every_corpus_ir_file(archive):
    root = unpacked_corpus(archive)
    files = sorted(root.rglob("ir_p*_fusion.txt"))
    assert files
    for path in files:
        text = path.read_text()
        parsed = parse_fusion_ir(text)
        assert parsed.problems == [], path
        assert parsed.facts["top_level_nodes"] == _top_level_by_grep(text), path
        if path.name == "ir_pre_fusion.txt":
            assert parsed.facts["top_level_nodes"] == len(re.findall(r"^op\d+: ", text, re.M)), path
        assert {r["buffer"] for r in parsed.rows["layouts"]} == _layout_names_by_grep(text), path


@pytest.mark.corpus
def test_all_gpu_runs_pre_fusion_nodes_equal_ground_truth():
    runs = sorted(p.parent for p in unpacked_corpus("gpu-h200-torch2.11.tar.xz").rglob("ground_truth.json"))
    assert len(runs) == 67
    for run in runs:
        truth = json.loads((run / "ground_truth.json").read_text())["ir_nodes_pre_fusion"]
        total = sum(parse_fusion_ir(p.read_text()).facts["top_level_nodes"] for p in run.rglob("ir_pre_fusion.txt"))
        assert total == truth, run.name


@pytest.mark.corpus
def test_non_owning_and_mutation_layouts():
    cpu = unpacked_corpus("cpu-torch2.14.1.tar.xz")
    path = next(cpu.rglob("transformer/**/model__0_backward_3.1/ir_post_fusion.txt"))
    layouts = {r["buffer"]: r for r in parse_fusion_ir(path.read_text()).rows["layouts"]}
    # `buf21.layout = NonOwningLayout('cpu', torch.float32, size=[4, 16, 64], stride=[3072, 192, 1])`
    assert (layouts["buf21"]["layout_kind"], layouts["buf21"]["stride"]) == ("NonOwningLayout", ["3072", "192", "1"])
    gpu = unpacked_corpus("gpu-h200-torch2.11.tar.xz")
    text = next(gpu.rglob("tv_resnet18__train__fp32__default/**/model__0_forward_1.0/ir_post_fusion.txt")).read_text()
    mutated = set(re.findall(r"^\s*(\w+?)(?:\.layout|_layout) = MutationLayoutSHOULDREMOVE", text, re.M))
    layouts = {r["buffer"]: r for r in parse_fusion_ir(text).rows["layouts"]}
    assert mutated and {b for b, r in layouts.items() if r["layout_kind"] == "MutationLayoutSHOULDREMOVE"} == mutated
