import json
from pathlib import Path

import pytest

from inductor_warehouse.ingest.parsers.spyre import parse_spyre_folder

FIXTURES = Path(__file__).parent / "fixtures" / "spyre"

# The table of ../shared/corpus/spyre/README.md: op -> (files, root keys, numCoresUsed_, dataFormat_)
README = {
    "add": (["sdsc_0.json"], ["0_add"], 32, "SEN169_FP16"),
    "add_3d": (["bundle.mlir", "sdsc_0.json"], ["0_add"], 32, "SEN169_FP16"),
    "add_fp32": (["bundle.mlir", "sdsc_0.json"], ["0_add"], 32, "IEEE_FP32"),
    "bmm": (["bundle.mlir", "sdsc_0.json"], ["0_batchmatmul"], 8, "SEN169_FP16"),
    "div": (["sdsc_0.json"], ["0_realdiv"], 32, "SEN169_FP16"),
    "exp": (["sdsc_0.json"], ["0_exp"], 32, "SEN169_FP16"),
    "fma": (["bundle.mlir", "sdsc_0.json", "sdsc_1.json"], ["0_mul", "1_add"], 8, "SEN169_FP16"),
    "gelu": (["sdsc_0.json"], ["0_gelufwd"], 32, "SEN169_FP16"),
    "mean_keepdim": (["bundle.mlir", "sdsc_0.json"], ["0_mean"], 32, "SEN169_FP16"),
    "mm": (["bundle.mlir", "sdsc_0.json"], ["0_batchmatmul"], 32, "SEN169_FP16"),
    "mul": (["sdsc_0.json"], ["0_mul"], 32, "SEN169_FP16"),
    "mul_bf16": (["bundle.mlir", "sdsc_0.json"], ["0_mul"], 32, "SEN169_FP16"),
    "relu": (["sdsc_0.json"], ["0_relufwd"], 32, "SEN169_FP16"),
    "sigmoid": (["bundle.mlir", "sdsc_0.json"], ["0_sigmoid"], 32, "SEN169_FP16"),
    "softmax": (["bundle.mlir"] + [f"sdsc_{i}.json" for i in range(6)],
                ["0_identity", "1_max", "2_sub", "3_exp", "4_sum", "5_realdiv"], 32, "SEN169_FP16"),
    "sub": (["sdsc_0.json"], ["0_sub"], 32, "SEN169_FP16"),
    "swiglu": (["bundle.mlir", "sdsc_0.json", "sdsc_1.json"], ["0_silu", "1_mul"], 8, "SEN169_FP16"),
}


def folder(op: str) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((FIXTURES / op).iterdir())}


def parse(op: str):
    parsed = parse_spyre_folder(folder(op))
    assert parsed.problems == []
    return parsed


def test_fixture_folders_match_the_readme():
    assert sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()) == sorted(README)
    for op, (files, *_rest) in README.items():
        assert sorted(folder(op)) == files


@pytest.mark.parametrize("op", sorted(README))
def test_rows_match_readme(op):
    _files, keys, cores, data_format = README[op]
    parsed = parse(op)
    kernels = parsed.rows["kernels"]
    assert [k["kernel_name"] for k in kernels] == keys
    assert {json.loads(k["details"])["num_cores"] for k in kernels} == {cores}
    assert {layout["dtype"] for layout in parsed.rows["layouts"]} == {data_format}
    assert parsed.facts == {"device": "spyre", "backend": "spyre"}


@pytest.mark.parametrize("op", sorted(README))
def test_rows_match_json(op):
    files = folder(op)
    parsed = parse(op)
    kernels = {k["kernel_name"]: k for k in parsed.rows["kernels"]}
    layouts = parsed.rows["layouts"]
    bundle = files.get("bundle.mlir", "")
    executed = [chunk.split('"', 1)[0] for chunk in bundle.split('sdsc_filename="')[1:]]
    expected_layouts = []
    for name, text in files.items():
        if not name.endswith(".json"):
            continue
        (root_key, root), = json.loads(text).items()
        (opfunc, dsc), = root["dscs_"][0].items()
        kernel = kernels[root_key]
        details = json.loads(kernel["details"])
        assert kernel["signature"] == opfunc == root_key.split("_", 1)[1]
        assert kernel["backend"] == "spyre" and kernel["generated"] is True
        assert kernel["source"] == text
        assert details["num_cores"] == root["numCoresUsed_"]
        assert details["work_division"] == root["numWkSlicesPerDim_"]
        assert kernel["site"] == (executed.index(name) if executed else int(root_key.split("_")[0]))
        assert kernel["aten_ops"] == ([root["debug_handle_"]["aten_op"]]
                                      if root["debug_handle_"]["aten_op"] else None)
        # torch-spyre's handle id (a content hash) is no Inductor debug handle: kept in details only
        assert kernel["debug_handle"] is None and details["debug_handle"] == root["debug_handle_"]
        component = {n["ldsIdx_"]: n["component_"] for n in dsc["scheduleTree_"]}
        for lds in dsc["labeledDs_"]:
            expected_layouts.append((root_key, lds["dsName_"], lds["dataFormat_"], lds["scale_"],
                                     component[lds["ldsIdx_"]]))
    got = [(row["kernel_name"], row["buffer"], row["dtype"], json.loads(row["details"])["scale_"],
            json.loads(row["details"])["placement"]) for row in layouts]
    assert sorted(got) == sorted(expected_layouts)
    assert all(row["device"] == "spyre" for row in layouts)


def test_categories():
    # read by hand: mm/bmm run on the `pt` unit; mean, max and sum write a reduced stick dim;
    # softmax's sub/realdiv only read the broadcast row max/sum; identity is the HBM->LX copy
    got = {(op, k["kernel_name"]): k["category"] for op in README for k in parse(op).rows["kernels"]}
    assert got[("mm", "0_batchmatmul")] == got[("bmm", "0_batchmatmul")] == "matmul"
    assert got[("mean_keepdim", "0_mean")] == "reduction"
    softmax = [got[("softmax", key)] for key in README["softmax"][1]]
    assert softmax == ["layout", "reduction", "pointwise", "pointwise", "reduction", "pointwise"]
    assert got[("add", "0_add")] == got[("swiglu", "0_silu")] == "pointwise"


def layout_of(op: str, kernel: str, buffer: str) -> dict:
    row, = [r for r in parse(op).rows["layouts"] if r["kernel_name"] == kernel and r["buffer"] == buffer]
    return {**row, "details": json.loads(row["details"])}


def test_reduced_output_layout():
    out = layout_of("mean_keepdim", "0_mean", "Tensor1")  # a.mean(-1, keepdim=True): 512x1
    assert out["layout_kind"] == "output" and out["size"] == ["512", "1"]
    # one element per stick: the sparse layout the examples' README gives for a.sum(dim=-1)
    assert out["details"]["device_size"] == [1, 512, 64]
    assert layout_of("mean_keepdim", "0_mean", "Tensor0")["details"]["device_size"] == [16, 512, 64]


def test_matmul_layouts():
    # mm: 512x1024 @ 1024x256; sticks of 64 fp16 on the last host dim
    kernel = layout_of("mm", "0_batchmatmul", "Tensor1")
    assert kernel["size"] == ["1024", "256"] and kernel["details"]["device_size"] == [4, 1024, 64]
    assert kernel["details"]["layout_class"] == "KERNEL"
    # add_3d: 4x256x512 -> default device layout [256, 8 sticks, 4, 64]
    assert layout_of("add_3d", "0_add", "Tensor0")["details"]["device_size"] == [256, 8, 4, 64]


def test_scratchpad_placement_and_execution_order():
    # fma = mul then add: the product stays in LX at offset 0 between the two OpSpecs
    product_out = layout_of("fma", "0_mul", "Tensor2")
    product_in = layout_of("fma", "1_add", "Tensor0")
    assert product_out["details"]["placement"] == product_in["details"]["placement"] == "lx"
    assert product_out["details"]["lx_offset"] == product_in["details"]["lx_offset"] == 0
    assert layout_of("fma", "1_add", "Tensor2")["details"]["placement"] == "hbm"
    assert [k["site"] for k in parse("fma").rows["kernels"]] == [0, 1]


def test_source_hash_ignores_provenance_only():
    # mul and mul_bf16 differ only in debug_handle_ (bf16 and fp16 both become SEN169_FP16)
    (mul,), (bf16,) = parse("mul").rows["kernels"], parse("mul_bf16").rows["kernels"]
    assert mul["source"] != bf16["source"] and mul["source_hash"] == bf16["source_hash"]
    (add,), (add_fp32,) = parse("add").rows["kernels"], parse("add_fp32").rows["kernels"]
    assert add["source_hash"] != add_fp32["source_hash"]


def test_bad_files_are_problems():
    files = folder("fma")
    files["sdsc_1.json"] = files["sdsc_1.json"][:1000]
    files["sdsc_2.json"] = '{"a": {}, "b": {}}'
    parsed = parse_spyre_folder(files)
    assert [k["kernel_name"] for k in parsed.rows["kernels"]] == ["0_mul"]
    assert len(parsed.problems) == 3  # truncated JSON, two root keys, sdsc_2.json not in bundle.mlir


def test_an_address_that_is_not_a_number_is_unknown():
    """Found by `make fuzz` (mutation 3988 of seed 0: a 20 MB line inside an sdsc spec): the LX
    start address was read with int() and the run's ingest stopped."""
    files = folder("fma")
    damaged = 0

    def damage(node):
        nonlocal damaged
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "startAddressCoreCorelet_" and isinstance(value, dict) and value.get("data_"):
                    value["data_"] = {k: "x" * 10_000 for k in value["data_"]}
                    damaged += 1
                else:
                    damage(value)
        elif isinstance(node, list):
            for value in node:
                damage(value)

    spec = json.loads(files["sdsc_0.json"])
    damage(spec)
    files["sdsc_0.json"] = json.dumps(spec)
    assert damaged
    parsed = parse_spyre_folder(files)
    whole = parse("fma")
    assert len(parsed.rows["layouts"]) == len(whole.rows["layouts"])
    details = [json.loads(r["details"]) for r in parsed.rows["layouts"] if r["kernel_name"] == "0_mul"]
    offsets = [d["lx_offset"] for d in details if d["placement"] == "lx"]
    assert offsets and offsets == [None] * len(offsets)
    assert layout_of("fma", "0_mul", "Tensor2")["details"]["lx_offset"] == 0  # undamaged: read
