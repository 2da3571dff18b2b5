import json
from collections import defaultdict
from pathlib import Path

import pytest

from inductor_warehouse.ingest.parsers.profiler import is_profiler_trace, parse_profiler
from tests.conftest import GPU_TRAIN_RUN, gpu_corpus

FIXTURES = Path(__file__).parent / "fixtures" / "profiler"
SMALLEST = FIXTURES / "mlp__infer__bf16__max_autotune.profile.json"  # smallest profile.json of the GPU corpus
TRAIN = GPU_TRAIN_RUN / "profile.json"
RECOMPILED = FIXTURES / "dyn_graphbreak__infer__fp32__default.profile.json"
ALL = [SMALLEST, TRAIN, RECOMPILED]


def kernel_sums(path: Path) -> dict[str, tuple[int, float]]:
    """Calls and total duration per kernel name, straight from the trace with plain json."""
    sums = defaultdict(lambda: [0, 0.0])
    for ev in json.loads(path.read_text())["traceEvents"]:
        if ev.get("cat") == "kernel":
            sums[ev["name"]][0] += 1
            sums[ev["name"]][1] += ev["dur"]
    return {name: (calls, total) for name, (calls, total) in sums.items()}


def row_sums(parsed) -> dict[str, tuple[int, float]]:
    sums = defaultdict(lambda: [0, 0.0])
    for r in parsed.rows["timings"]:
        sums[r["name"]][0] += r["calls"]
        sums[r["name"]][1] += r["duration_us"]
    return {name: (calls, total) for name, (calls, total) in sums.items()}


def test_sniff():
    assert is_profiler_trace(SMALLEST.read_bytes()[:4096])
    # torch.profiler writes deviceProperties first: a short head may not reach traceEvents yet
    assert is_profiler_trace(SMALLEST.read_bytes()[:300])
    assert not is_profiler_trace(b"V1122 00:02:09.262000 4187 torch/_inductor/scheduler.py:3706] [0/0]")


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_calls_and_durations_equal_trace_sums(path):
    parsed = parse_profiler(path.read_bytes())
    expected = kernel_sums(path)
    got = row_sums(parsed)
    assert got.keys() == expected.keys()
    for name, (calls, total) in expected.items():
        assert got[name][0] == calls, name
        assert got[name][1] == pytest.approx(total, abs=1e-9), name
    assert all(r["kind"] == "kernel" and r["source"] == "profiler" and r["graph_id"] is None
               for r in parsed.rows["timings"])
    assert parsed.problems == []
    assert parsed.facts["device_name"] == "NVIDIA H200"


def attribution(path: Path) -> dict[str, set]:
    parsed = parse_profiler(path.read_bytes())
    found = defaultdict(set)
    for r in parsed.rows["timings"]:
        found[r["name"]].add((r["compile_id"], r["phase"]))
    return found


def test_inference_kernels_belong_to_their_compiled_region():
    found = attribution(SMALLEST)
    # the three max-autotune templates run inside `Torch-Compiled Region: 0/0`; the bf16 input
    # cast (the one at::native kernel) runs before it, in eager
    for name in ("triton_tem_fused_addmm_gelu_t_0", "triton_tem_fused_addmm_gelu_relu_t_1",
                 "triton_tem_fused_addmm_relu_t_2"):
        assert found[name] == {("0/0", "inference")}
    eager = [n for n in found if n.startswith("void at::native::")]
    assert len(eager) == 1 and found[eager[0]] == {(None, None)}


def test_recompiled_frames_keep_their_compile_ids():
    found = attribution(RECOMPILED)
    # the profiled step runs the recompiled (dynamic) graphs: regions 0/1 and 1/1
    assert found["triton_red_fused_addmm_gt_silu_sum_0"] == {("0/1", "inference")}
    assert found["triton_per_fused__softmax_amax_mul_sub_0"] == {("1/1", "inference")}


def test_backward_kernels_follow_the_fwdbwd_link():
    found = attribution(TRAIN)
    assert found["triton_poi_fused_gelu_0"] == {("0/0", "forward")}
    assert found["triton_poi_fused_addmm_relu_1"] == {("0/0", "forward")}
    # launched on the autograd thread inside CompiledFunctionBackward, outside any compiled region
    for name in ("triton_per_fused_sum_0", "triton_per_fused_sum_threshold_backward_1",
                 "triton_per_fused_gelu_gelu_backward_sum_2"):
        assert found[name] == {("0/0", "backward")}
    split_k = [n for n in found if n.startswith("void cublasLt::splitKreduce_kernel")]
    assert len(split_k) == 1 and found[split_k[0]] == {("0/0", "forward"), ("0/0", "backward")}
    optimizer = [n for n in found if "multi_tensor_apply_kernel" in n]
    assert len(optimizer) == 1 and found[optimizer[0]] == {(None, None)}


def test_bad_input_is_recorded_not_raised():
    parsed = parse_profiler(SMALLEST.read_bytes()[:5000])
    assert parsed.rows["timings"] == [] and len(parsed.problems) == 1
    parsed = parse_profiler(b'{"traceEvents": [{"cat": "kernel", "name": "k"}, 3]}')
    assert parsed.rows["timings"] == [] and len(parsed.problems) == 2




@pytest.mark.corpus
def test_every_gpu_run_sums_match():
    paths = sorted(gpu_corpus().glob("*/profile.json"))
    assert len(paths) == 67
    for path in paths:
        parsed = parse_profiler(path.read_bytes())
        expected, got = kernel_sums(path), row_sums(parsed)
        assert got.keys() == expected.keys(), path
        for name, (calls, total) in expected.items():
            assert got[name] == (calls, pytest.approx(total, abs=1e-6)), (path, name)
        # every Triton kernel ran inside compiled code, so each has a compile id
        assert all(r["compile_id"] for r in parsed.rows["timings"] if r["name"].startswith("triton_")), path


def launching_ops(path: Path) -> dict[str, float]:
    """Kernel time by the CPU op that launched it, read with plain json through the profiler's own link:
    a kernel event's `External id` is that of the cpu_op it was launched in. Only ops named aten::*
    that sit inside a compiled region (the extern calls of generated code), by name."""
    events = json.loads(path.read_text())["traceEvents"]
    ops = {ev["args"]["External id"]: ev for ev in events if ev.get("cat") == "cpu_op" and "External id" in ev.get("args", {})}
    regions = [(ev["ts"], ev["ts"] + ev["dur"], ev["tid"]) for ev in events
               if ev.get("cat") == "cpu_op" and ev["name"].startswith(("## Call CompiledFxGraph", "CompiledFunction"))]
    out = defaultdict(float)
    for ev in events:
        if ev.get("cat") != "kernel":
            continue
        op = ops.get(ev["args"].get("External id"))
        if op and op["name"].startswith("aten::") and any(
                s <= op["ts"] <= e and tid == op["tid"] for s, e, tid in regions):
            out[op["name"]] += ev["dur"]
    return dict(out)


def test_kernels_in_a_range_of_their_own_name_name_no_op():
    """max-autotune's Triton templates run in a cpu_op named after the kernel: no extern op launched them."""
    parsed = parse_profiler(SMALLEST.read_bytes())
    assert parsed.rows["timings"] and all(r["launched_by"] is None for r in parsed.rows["timings"])


@pytest.mark.parametrize("path", [TRAIN, RECOMPILED], ids=lambda p: p.name)
def test_extern_kernels_carry_the_op_that_launched_them(path):
    """cuBLAS kernels of the compiled graphs' extern calls (aten::mm, aten::addmm) are tied to the op
    that launched them, as the trace's own links say, and each call of an op has its own index."""
    parsed = parse_profiler(path.read_bytes())
    by_op = defaultdict(float)
    for r in parsed.rows["timings"]:
        if r["launched_by"] is not None:
            by_op[r["launched_by"]] += r["duration_us"]
            assert r["compile_id"] is not None and r["launch_index"] >= 0
        else:
            assert r["launch_index"] is None
    expected = launching_ops(path)
    assert expected, "the profile has extern calls inside a compiled graph"
    assert by_op.keys() == expected.keys()
    for op, total in expected.items():
        assert by_op[op] == pytest.approx(total, abs=1e-6), op
    # the calls of one op in one graph call are numbered 0, 1, ... in the order they ran
    indexes = defaultdict(set)
    for r in parsed.rows["timings"]:
        if r["launched_by"]:
            indexes[(r["compile_id"], r["phase"], r["launched_by"])].add(r["launch_index"])
    assert all(found == set(range(len(found))) for found in indexes.values()), indexes


def test_a_cpu_profile_has_no_kernel_events_and_says_so():
    """A CPU run's profile.json records CPU ops only (Inductor's C++ kernels have no record of their
    own): no kernel rows, and the parse counts the profile as one without kernel events."""
    events = [{"ph": "X", "cat": "cpu_op", "name": "Torch-Compiled Region: 0/0", "pid": 1, "tid": 1, "ts": 0,
               "dur": 100, "args": {"External id": 1}},
              {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 10, "dur": 50,
               "args": {"External id": 2}}]
    parsed = parse_profiler(json.dumps({"traceEvents": events}).encode())
    assert parsed.rows["timings"] == [] and parsed.problems == []
    assert parsed.counters["profiler.no_kernel_events"] == 1
