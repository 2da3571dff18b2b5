"""fx_graph parser on real post-grad graphs (debug tree and trace payload)."""

from __future__ import annotations

import re

import pytest

from inductor_warehouse.ingest.parsers.fx_graph import parse_fx_graph
from tests.conftest import FIXTURES, fixture_files, unpacked_corpus

TREE = FIXTURES / "debug_tree"
GRAPH_FILES = fixture_files("fx_graph_readable.py") + fixture_files("fx_graph_transformed.py")
DYN_13 = "cpu-2.13-dynamic/torch_compile_debug/run_2026_11_22_00_09_17_736866-pid_18849/torchinductor"
T_26 = "cpu-2.6.0-transformer/torch_compile_debug/run_2026_11_22_00_03_10_696637-pid_16591/torchinductor"
T_141 = "cpu-2.14.1-transformer/torch_compile_debug/run_2026_11_21_23_59_30_982852-pid_14091/torchinductor"


def _names_by_grep(text: str) -> list[str]:
    """Node names the simple way: forward() args, then every `        name... = ` line, then output."""
    lines = text.splitlines()
    signature = next(line for line in lines if "def forward(" in line)
    args = re.findall(r'(\w+): "', signature)
    nodes = [m.group(1) for line in lines if (m := re.match(r"^        (\w+)(?:: \"[^\"]*\")? = ", line))]
    return args + nodes + ["output"]


def _ops(rel: str) -> list[dict]:
    parsed = parse_fx_graph((TREE / rel).read_text())
    assert parsed.problems == []
    return parsed.rows["ops"]


@pytest.mark.parametrize("path", GRAPH_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_ops_match_the_graph_file_line_by_line(path):
    text = path.read_text()
    parsed = parse_fx_graph(text)
    assert parsed.problems == []
    ops = parsed.rows["ops"]
    assert [op["name"] for op in ops] == _names_by_grep(text)
    assert [op["idx"] for op in ops] == list(range(len(ops)))
    # node lines calling a torch op, counted with grep; the rest are getitems or symbolic arithmetic
    calls = len(re.findall(r"^        \w+(?:: \"[^\"]*\")? = torch\.ops\.", text, re.M))
    getitems = len(re.findall(r"^        \w+(?:: \"[^\"]*\")? = \w+\[\d+\]", text, re.M))
    ops_calls = [op for op in ops if op["op_kind"] == "call_function" and not op["target"].startswith("operator.")]
    assert len(ops_calls) == calls
    assert sum(1 for op in ops if op["op_kind"] == "getitem") == getitems


def test_symbolic_shapes_and_arithmetic():
    ops = _ops(f"{DYN_13}/model__3_forward_8.5/fx_graph_readable.py")
    # the file: 5 forward() args, 7 nodes, the return
    assert len(ops) == 13
    assert ops[2] == {
        "idx": 2, "name": "primals_3", "op_kind": "placeholder", "target": None, "dtype": None,
        "shape": "Sym(s77)", "source_file": None, "source_line": None, "source_code": None,
    }
    assert ops[4]["dtype"] == "f32" and ops[4]["shape"] == "[s77, s27, 32]"
    assert ops[5] == {
        "idx": 5, "name": "mul_6", "op_kind": "call_function", "target": "operator.mul", "dtype": None,
        "shape": "Sym(s27*s77)", "source_file": "/home/user/corpus/gen_models.py", "source_line": 35,
        "source_code": "y = torch.tanh(s.l1(x)) * 2",
    }
    assert (ops[6]["target"], ops[6]["shape"]) == ("aten.view.default", "[s27*s77, 32]")
    assert ops[-1] == {
        "idx": 12, "name": "output", "op_kind": "output", "target": None, "dtype": None, "shape": None,
        "source_file": None, "source_line": None, "source_code": None,
    }


def test_multi_output_nodes_and_getitems():
    ops = {op["name"]: op for op in _ops(f"{T_26}/model__0_forward_1.0/fx_graph_readable.py")}
    # `var_mean = torch.ops.aten.var_mean.correction(...)` has no annotation, its parts do
    assert (ops["var_mean"]["op_kind"], ops["var_mean"]["target"]) == ("call_function", "aten.var_mean.correction")
    assert (ops["var_mean"]["dtype"], ops["var_mean"]["shape"]) == (None, None)
    assert ops["getitem_1"]["op_kind"] == "getitem" and ops["getitem_1"]["target"] == "getitem"
    assert (ops["getitem_1"]["dtype"], ops["getitem_1"]["shape"]) == ("f32", "[4, 16, 1]")
    # 2.6 indents this comment by 9 spaces: `         # File: /home/user/corpus/gen_models.py:21 in forward, ...`
    assert ops["var_mean"]["source_line"] == 21
    assert ops["var_mean"]["source_code"] == "q, k, v = s.qkv(s.ln1(x)).split(C, dim=-1)"


def test_backward_of_comment_and_no_stacktrace():
    ops = _ops(f"{T_141}/model__0_forward_1.0/fx_graph_readable.py")
    by_name = {op["name"]: op for op in ops}
    # line 79: `# Backward of forward node: File: /home/user/corpus/gen_models.py:65 in loss_fn, code: ...`
    sourced = [op for op in ops if op["source_line"] == 65]
    assert sourced and all(op["source_code"] == "return m(x).pow(2).mean()" for op in sourced)
    assert by_name["primals_1"]["source_file"] is None


def test_trace_payload_with_strides_and_device_reads_like_the_debug_file():
    payload = parse_fx_graph((TREE / "cpu-2.14.1-transformer/trace_payloads/inductor_post_grad_graph.txt").read_text())
    # the payload is logged after Inductor's FX passes (view -> reshape): the transformed graph
    debug = _ops(f"{T_141}/model__0_forward_1.0/fx_graph_transformed.py")
    assert payload.problems == []
    keys = ("name", "op_kind", "target", "dtype", "shape", "source_line")
    assert [tuple(op[k] for k in keys) for op in payload.rows["ops"]] == [tuple(op[k] for k in keys) for op in debug]
    # `primals_1: "f32[4, 16, 64][1024, 64, 1]cpu"` in the payload
    assert payload.rows["ops"][0]["shape"] == "[4, 16, 64]"


def test_cut_graph_keeps_nodes_and_reports_problem():
    parsed = parse_fx_graph((FIXTURES / "broken/cut_fx_graph/fx_graph_readable.py").read_text())
    # first 8 lines of the GPU mlp forward graph: 7 args, 5 nodes, no return
    assert [op["name"] for op in parsed.rows["ops"]][7:] == ["permute", "addmm", "mul", "mul_1", "erf"]
    assert len(parsed.problems) == 1 and "no return" in parsed.problems[0].message


def test_not_a_graph_is_a_problem_not_an_exception():
    parsed = parse_fx_graph("\ufffd\ufffd garbage\n\x01\x02")
    assert parsed.rows["ops"] == []
    assert parsed.problems


ARCHIVES = ("cpu-torch2.6.0.tar.xz", "cpu-torch2.13.tar.xz", "cpu-torch2.14.1.tar.xz", "gpu-h200-torch2.11.tar.xz")


@pytest.mark.corpus
@pytest.mark.parametrize("archive", ARCHIVES)
def test_every_corpus_graph_parses_without_problems(archive):
    root = unpacked_corpus(archive)
    files = sorted(root.rglob("fx_graph_readable.py")) + sorted(root.rglob("fx_graph_transformed.py"))
    assert files
    for path in files:
        text = path.read_text()
        parsed = parse_fx_graph(text)
        assert parsed.problems == [], path
        assert [op["name"] for op in parsed.rows["ops"]] == _names_by_grep(text), path
