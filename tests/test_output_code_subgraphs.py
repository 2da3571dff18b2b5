"""Kernels and extern sites inside the wrapper's subgraph functions (torch 2.13 CPU captures of the
kinds hunt: regional compilation, graph deduplication, while_loop)."""

from __future__ import annotations

import re

import orjson
import pytest

from inductor_warehouse.ingest.parsers.output_code import parse_output_code
from tests.conftest import FIXTURES

KINDS = FIXTURES / "kinds_2.13"
EXTERN_SITE = re.compile(r"^\s+extern_kernels\.(\w+)\(", re.M)


def _rows(path):
    parsed = parse_output_code(path.read_text())
    assert parsed.problems == [], path
    kernels = parsed.rows["kernels"]
    calls = {k["kernel_name"]: orjson.loads(k["details"])["calls"] for k in kernels if k["generated"]}
    return [k for k in kernels if not k["generated"]], calls


@pytest.mark.parametrize("graph, sites", [
    ("region/output_code.py", 2),  # repeated_subgraph0: addmm twice, call none
    ("dedup/output_code.py", 1),
    ("region_train/model__0_forward_1.0/output_code.py", 6),  # call 2, two subgraphs 2 each
    ("region_train/model__0_backward_3.1/output_code.py", 11),  # call 3, two subgraphs 4 each
    ("cond_gb/output_code.py", 0),
])
def test_extern_sites_in_subgraph_functions_are_counted_once_each(graph, sites):
    path = KINDS / graph
    externs, _ = _rows(path)
    assert len(externs) == sites == len(EXTERN_SITE.findall(path.read_text()))
    assert [k["site"] for k in externs] == list(range(sites))


def test_region_subgraph_sites_say_where_they_are_and_how_often_they_run():
    externs, calls = _rows(KINDS / "region/output_code.py")
    # Runner.call invokes repeated_subgraph0 three times, once per block of kp.py's model
    assert [orjson.loads(k["details"]) for k in externs] == [{"subgraph": "repeated_subgraph0", "calls": 3}] * 2
    assert [k["line"] for k in externs] == [129, 140]
    assert calls == {"cpp_fused_relu_0": 3, "cpp_fused_add_1": 3, "cpp_fused_sum_2": 1}


def test_training_region_keeps_call_sites_plain():
    externs, calls = _rows(KINDS / "region_train/model__0_forward_1.0/output_code.py")
    where = [orjson.loads(k["details"])["subgraph"] if k["details"] else None for k in externs]
    assert where == ["partitioned_fw_subgraph_1_1"] * 2 + ["partitioned_fw_subgraph_1_0"] * 2 + [None] * 2
    # the first block runs inline in call, the other two through one subgraph function each
    assert calls == {"cpp_fused_relu_0": 3, "cpp_fused_add_1": 3, "cpp_fused_sum_2": 1}


def test_while_loop_bodies_count_each_invoking_statement():
    _, calls = _rows(KINDS / "cond_gb/output_code.py")
    # call invokes the condition before the loop and inside it, the body once inside it
    assert calls == {"cpp_fused_lt_0": 2, "cpp_fused_add_mul_1": 1}


def test_cpu_gemm_template_kernels_are_templates():
    """max-autotune + freezing on CPU (`kp.py maxat_freeze`): both Linear+ReLU GEMMs became C++ GEMM
    templates with a fused epilogue (Inductor counted cpp_templated_kernel_counter 2); each defines
    its micro-GEMM."""
    text = (KINDS / "maxat_freeze/output_code.py").read_text()
    kernels = parse_output_code(text).rows["kernels"]
    assert [(k["kernel_name"], k["category"]) for k in kernels] == [
        ("cpp_fused_addmm_relu_0", "template"), ("cpp_fused_addmm_relu_1", "template")]
    assert text.count("inline void kernel_micro_gemm(") == 2
