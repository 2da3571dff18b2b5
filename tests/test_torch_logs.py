from collections import Counter
from pathlib import Path

import pytest

from inductor_warehouse.ingest.parsers.torch_logs import is_torch_logs, parse_torch_logs
from tests.conftest import gpu_corpus

FIXTURES = Path(__file__).parent / "fixtures" / "torch_logs"
GRAPHBREAK = FIXTURES / "dyn_graphbreak__infer__fp32__default.torch_logs.txt"
AUTOTUNE = FIXTURES / "mlp__infer__bf16__max_autotune.torch_logs.txt"


def parse(path: Path):
    with path.open(encoding="utf-8") as fh:
        return parse_torch_logs(fh)


def grep_refusals(path: Path) -> Counter:
    """(line, node_a, node_b, reason) of every `cannot fuse` line, by plain string splitting."""
    found = Counter()
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if "cannot fuse " in line:
            pair, reason = line.split("cannot fuse ", 1)[1].split(": ", 1)
            a, b = pair.split(" with ")
            found[(lineno, a, b, reason)] += 1
    return found


def rows_of(parsed, decision: str) -> Counter:
    return Counter(
        (r["line"], r["node_a"], r["node_b"], r["reason"])
        for r in parsed.rows["fusion_decisions"]
        if r["decision"] == decision
    )


def test_sniff():
    assert is_torch_logs(GRAPHBREAK.read_bytes()[:4096])
    assert not is_torch_logs(b'{"traceEvents": []}')


@pytest.mark.parametrize("path", [GRAPHBREAK, AUTOTUNE], ids=lambda p: p.name)
def test_refusals_equal_grep(path):
    parsed = parse(path)
    assert rows_of(parsed, "refused") == grep_refusals(path)
    assert parsed.problems == []


def test_graphbreak_run_rows():
    parsed = parse(GRAPHBREAK)
    # read by hand from the fixture: lines 38/39 and 62/63 are `fusing` lines of 0/0 and 1/0
    fused = [(r["compile_id"], r["node_a"], r["node_b"], r["line"])
             for r in parsed.rows["fusion_decisions"] if r["decision"] == "fused"]
    assert fused == [
        ("0/0", "op1", "op2", 38), ("0/0", "op1_op2", "op3", 39),
        ("1/0", "op0", "op1", 62), ("1/0", "op0_op1", "op2", 63),
        ("0/1", "op1", "op2", 90), ("0/1", "op1_op2", "op3", 91),
        ("1/1", "op0", "op1", 117), ("1/1", "op0_op1", "op2", 118),
    ]
    refused = [(r["compile_id"], r["reason"]) for r in parsed.rows["fusion_decisions"]
               if r["decision"] == "refused"]
    assert refused == [("1/0", "intermediate nodes between node1 & node2"),
                       ("1/1", "intermediate nodes between node1 & node2")]

    events = [(e["kind"], e["compile_id"], e["reason"], e["user_file"], e["user_line"], e["source"])
              for e in parsed.rows["compile_events"]]
    # the frame's own data-dependent branch: Dynamo counts it under unimplemented, not graph_break (its
    # ground_truth.json's counters["graph_break"] is empty)
    assert events == [
        ("uncounted_break", "0/0", "Data-dependent branching", "/home/user/bench/zoo.py", 44, "torch_logs"),
        ("recompile", "0/1", "0/0: tensor 'x' size mismatch at index 0. expected 8, actual 16",
         "/home/user/bench/zoo.py", 42, "torch_logs"),
        ("uncounted_break", "0/1", "Data-dependent branching", "/home/user/bench/zoo.py", 44, "torch_logs"),
        ("recompile", "1/1", "1/0: tensor 'y' size mismatch at index 0. expected 8, actual 16",
         "/home/user/bench/zoo.py", 44, "torch_logs"),
    ]


def test_benchmark_speedup_becomes_fused_reason():
    parsed = parse(AUTOTUNE)
    fused = [(r["node_a"], r["node_b"], r["reason"])
             for r in parsed.rows["fusion_decisions"] if r["decision"] == "fused"]
    # fixture lines 49-52: each `can fuse (benchmark)` line precedes its `fusing` line
    assert fused == [
        ("op0", "op1", "benchmark: fusing OrderedSet(['buf0']) with OrderedSet(['buf1']) cause 1.189x speedup"),
        ("op2", "op3", "benchmark: fusing OrderedSet(['buf2']) with OrderedSet(['buf3']) cause 1.567x speedup"),
    ]


@pytest.mark.corpus
def test_hf_bert_refusals():
    path = gpu_corpus() / "hf_bert__infer__fp32__default" / "torch_logs.txt"
    parsed = parse(path)
    expected = grep_refusals(path)
    assert sum(expected.values()) == 41  # the count, `grep -c 'cannot fuse'`
    assert rows_of(parsed, "refused") == expected
    reasons = Counter(r["reason"] for r in parsed.rows["fusion_decisions"] if r["decision"] == "refused")
    assert reasons == Counter(key[3] for key in expected.elements())


def test_truncated_refusal_is_a_problem_not_an_exception():
    # a real fixture line cut before its reason, as when a run is killed mid-write
    real = GRAPHBREAK.read_text(encoding="utf-8").splitlines()[59]
    cut = real[: real.index(": intermediate")]
    parsed = parse_torch_logs([cut, real])
    assert [r["line"] for r in parsed.rows["fusion_decisions"]] == [2]
    assert [(p.line, p.severity) for p in parsed.problems] == [(1, "warning")]
