"""provenance parser on real node-mapping files (debug dir and trace artifact)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from inductor_warehouse.ingest.parsers.provenance import parse_provenance
from tests.conftest import FIXTURES, GPU_TRAIN_RUN, fixture_files, unpacked_corpus

TREE = FIXTURES / "debug_tree"
GPU_FWD = GPU_TRAIN_RUN / (
    "torch_compile_debug/run_2026_11_22_00_02_07_627292-pid_4247/"
    "torchinductor/model__0_forward_1.0/inductor_provenance_tracking_node_mappings.json"
)
T_141 = TREE / "cpu-2.14.1-transformer"
T_141_DEBUG = T_141 / (
    "torch_compile_debug/run_2026_11_21_23_59_30_982852-pid_14091/torchinductor/model__0_forward_1.0/"
    "inductor_provenance_tracking_node_mappings.json"
)
MAPPING_FILES = fixture_files("inductor_provenance_tracking_node_mappings.json")
ARCHIVES = ("cpu-torch2.13.tar.xz", "cpu-torch2.14.1.tar.xz", "gpu-h200-torch2.11.tar.xz")


def _chains(path):
    parsed = parse_provenance(path.read_bytes())
    assert parsed.problems == [], path
    return [(r["source_node"], r["post_grad_node"], r["kernel_name"], r["debug_handle"]) for r in parsed.rows["lineage"]]


def test_exact_chains_of_a_small_graph():
    # read off the file by hand: permute_* feed extern mm/addmm through reinterpret views, no kernel of their own
    assert _chains(GPU_FWD) == [
        ("input_1", "permute", None, None),
        ("input_1", "addmm", "extern_kernels.addmm", 1),
        ("input_2", "mul", "triton_poi_fused_gelu_0", 2),
        ("input_2", "mul_1", "triton_poi_fused_gelu_0", 2),
        ("input_2", "erf", "triton_poi_fused_gelu_0", 2),
        ("input_2", "add", "triton_poi_fused_gelu_0", 2),
        ("input_2", "mul_2", "triton_poi_fused_gelu_0", 2),
        ("input_3", "permute_1", None, None),
        ("input_3", "mm_default", "extern_kernels.mm", 3),
        ("input_3", "add_tensor", "triton_poi_fused_addmm_relu_1", 4),
        ("input_4", "relu", "triton_poi_fused_addmm_relu_1", 4),
        ("input_5", "permute_2", None, None),
        ("input_5", "addmm_2", "extern_kernels.addmm", 5),
    ]
    rows = parse_provenance(GPU_FWD.read_bytes()).rows["lineage"]
    assert all(r["source"] == "provenance" and r["user_file"] is None and r["user_line"] is None for r in rows)


@pytest.mark.parametrize("path", MAPPING_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_mapping_is_covered(path):
    doc = json.loads(path.read_text())
    chains = _chains(path)
    pairs = {(post, f"{kernel}:{handle}") for _, post, kernel, handle in chains if kernel}
    assert pairs == {(post, key) for post, keys in doc["postToCppCode"].items() for key in keys}
    pre_post = {(pre, post) for pre, post, _, _ in chains if pre and post}
    # an empty pre-grad name (pattern-rewritten nodes) is read as "no pre-grad node"
    expected = {(pre, post) for pre, posts in doc["preToPost"].items() for post in posts} | {
        (pre, post) for post, pres in doc["postToPre"].items() for pre in pres}
    assert pre_post == {(pre, post) for pre, post in expected if pre}


def test_post_nodes_without_pre_grad_node_keep_their_kernel():
    # compiled-autograd graph: preToPost is empty, kernels still map to post-grad nodes
    path = next(TREE.rglob("cpu-2.14.1-ca/**/inductor_provenance_tracking_node_mappings.json"))
    doc = json.loads(path.read_text())
    assert doc["preToPost"] == {}
    chains = _chains(path)
    assert chains and all(pre is None for pre, _, _, _ in chains)
    assert len(chains) == sum(len(keys) for keys in doc["postToCppCode"].values())


def test_trace_artifact_v2_reads_like_the_debug_file():
    trace = parse_provenance((T_141 / "trace_payloads/inductor_provenance_tracking_node_mappings.json").read_text())
    assert trace.problems == [] and trace.facts == {"provenance_version": "2.0"}
    debug = parse_provenance(T_141_DEBUG.read_bytes())
    assert Counter(tuple(r.values()) for r in trace.rows["lineage"]) == Counter(
        tuple(r.values()) for r in debug.rows["lineage"])


def test_kernel_names_split_on_the_last_colon():
    chains = _chains(T_141_DEBUG)
    # key `torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default:3`
    assert ("torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default", 3) in {
        (kernel, handle) for _, _, kernel, handle in chains}


def test_cut_json_is_a_problem():
    parsed = parse_provenance((FIXTURES / "broken/cut_provenance/inductor_provenance_tracking_node_mappings.json").read_bytes())
    assert parsed.rows["lineage"] == [] and len(parsed.problems) == 1


@pytest.mark.corpus
@pytest.mark.parametrize("archive", ARCHIVES)
def test_every_corpus_mapping(archive):
    files = sorted(unpacked_corpus(archive).rglob("inductor_provenance_tracking_node_mappings.json"))
    assert files
    for path in files:
        test_every_mapping_is_covered(path)


def test_a_provenance_artifact_without_payload_is_no_problem(tmp_path):
    """torch's FX graph cache hit (codecache's cache_hit_post_compile) logs both provenance artifacts
    with the cached graph's strings, None where the graph was compiled without provenance tracking:
    records with no payload line. Real ones: the H100 Llama capture (tests/fixtures/SOURCES.md), read
    apart from the parser; nothing to store, nothing wrong."""
    import re
    import tarfile

    from inductor_warehouse.ingest.parsers.torch_trace import parse_torch_trace

    with tarfile.open(FIXTURES / "captures" / "dynamo-counts-gpu.tar.xz") as tf:
        tf.extractall(tmp_path, filter="data")
    log = next((tmp_path / "gpu-torch2.11" / "llama_attentions" / "trace").glob("*.log"))
    lines = log.read_text().splitlines()
    empty = [i for i, line in enumerate(lines) if re.search(r'"name": "inductor_provenance_tracking_\w+"', line)
             and (i + 1 == len(lines) or not lines[i + 1].startswith("\t"))]
    assert len(empty) == 4
    parsed = parse_torch_trace(open(log, "rb"))
    assert [p.message for p in parsed.problems if "provenance" in p.message] == []
