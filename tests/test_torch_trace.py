"""TORCH_TRACE parser on real logs (tests/fixtures/torch_trace, gzipped copies; see SOURCES.md).

Expected numbers are counted independently of the parser: by substring counts over the header
lines (lines not starting with a TAB), or by hand where a comment says so.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from collections import Counter
from pathlib import Path

import pytest

from inductor_warehouse.ingest.parsers.torch_trace import is_torch_trace, parse_torch_trace
from tests.conftest import FIXTURES, corpus_path, unpacked_corpus

TT = FIXTURES / "torch_trace"
DYNAMIC_213 = TT / "cpu-torch2.13-dynamic" / "dedicated_log_torch_trace_r5h24g62.log.gz"
CA_26 = TT / "cpu-torch2.6.0-ca" / "dedicated_log_torch_trace__p9er2cv.log.gz"
CA_2141 = TT / "cpu-torch2.14.1-ca" / "dedicated_log_torch_trace_5bvb0xvn.log.gz"
CORRUPTED = TT / "tlparse" / "simple_corrupted_json.log.gz"
COMP_FAILURE = TT / "tlparse" / "comp_failure.log.gz"
RANK_0 = TT / "tlparse" / "dedicated_log_torch_trace_rank_0.log.gz"
BAD_RECORDS = FIXTURES / "broken" / "torch_trace_bad_records.log"
ALL_LOGS = [DYNAMIC_213, CA_26, CA_2141, CORRUPTED, COMP_FAILURE, RANK_0]

# failed guards per fixture, counted by hand in the recompile_reasons payloads: 2.13 dynamic has
# three one-line text payloads; 2.14.1 ca has two text payloads (one reason each, with a `User
# stack trace:`) and JSON lists of 2 and 3
RECOMPILE_REASONS = {DYNAMIC_213: 3, CA_26: 0, CA_2141: 7, CORRUPTED: 0, COMP_FAILURE: 0, RANK_0: 0}


def _parse(path: Path):
    with gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb") as f:
        return parse_torch_trace(f)


def _headers(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8") as f:
        return [line for line in f if not line.startswith("\t")]


def _count(headers: list[str], needle: str) -> int:
    return sum(needle in h for h in headers)


def _events(parsed, kind: str) -> list[dict]:
    return [e for e in parsed.rows["compile_events"] if e["kind"] == kind]


@pytest.mark.parametrize("path", ALL_LOGS, ids=lambda p: p.parent.name + "/" + p.name)
def test_counts_match_the_records_of_the_log(path):
    parsed = _parse(path)
    headers = _headers(path)
    compilations = _count(headers, '] {"compilation_metrics": ') + _count(headers, '] {"bwd_compilation_metrics": ')
    assert len(parsed.rows["compilations"]) == compilations
    # every graph-break record is a counted break, an uncounted one, or a frame that fell back
    breaks = len(_events(parsed, "graph_break")) + len(_events(parsed, "uncounted_break"))
    assert breaks + parsed.counters["graph_break_of_a_skipped_frame"] == _count(
        headers, '"name": "dynamo_graph_break_reason"')
    recompiles = _events(parsed, "recompile")
    # a recompile_reasons artifact is logged once per recompile, listing each guard that failed
    assert len(recompiles) == len({e["compile_id"] for e in recompiles}) == _count(
        headers, '"name": "recompile_reasons"')
    assert sum(len(e["details"]) for e in recompiles) == RECOMPILE_REASONS[path]
    assert all(e["reason"] == "\n".join(e["details"]) for e in recompiles)
    # a failed compile writes a dynamo_error artifact and its metrics' fail_type: one failure
    failures = _events(parsed, "failure")
    assert len(failures) == len({e["compile_id"] for e in failures}) == _count(headers, '"fail_type": "')
    assert parsed.counters["dynamo_error_of_a_reported_failure"] == _count(headers, '"name": "dynamo_error"')
    assert len(parsed.rows["guards"]) == _count(headers, '] {"dynamo_cpp_guards_str": ')
    assert len(parsed.rows["graphs"]) == _count(headers, '] {"inductor_output_code": ')
    assert parsed.counters["records"] == len([h for h in headers if h.strip()])


@pytest.mark.parametrize("path", [DYNAMIC_213, CA_26, CA_2141, COMP_FAILURE, RANK_0], ids=lambda p: p.name)
def test_every_payload_checksum_verifies(path):
    parsed = _parse(path)
    assert parsed.counters["md5_verified"] == _count(_headers(path), '"has_payload": ')
    assert parsed.counters["md5_mismatch"] == 0
    assert parsed.problems == []


def test_corrupted_json_gives_problems_and_keeps_every_good_record():
    parsed = _parse(CORRUPTED)
    headers = _headers(CORRUPTED)
    # line 13: the chromium_event whose payload lost its `},` line (tlparse's corrupted sample);
    # its has_payload is the md5 of the uncorrupted payload
    assert [(p.line, p.severity) for p in parsed.problems] == [(13, "warning"), (13, "error")]
    assert "md5 mismatch" in parsed.problems[0].message and "record kept" in parsed.problems[0].message
    assert parsed.counters["records"] == len(headers) == 76
    assert parsed.counters["md5_verified"] == _count(headers, '"has_payload": ') - 1
    assert parsed.counters["kind:chromium_event"] == _count(headers, '] {"chromium_event": ')
    assert len(parsed.rows["compilations"]) == 1
    assert len(parsed.rows["graphs"]) == 1


def test_bad_envelope_blank_and_foreign_lines_are_reported_and_the_rest_kept():
    parsed = _parse(BAD_RECORDS)
    # see SOURCES.md: line 22's envelope is cut mid-object, line 39 is not a trace line
    assert [(p.line, p.severity) for p in parsed.problems] == [(22, "error"), (39, "error")]
    assert "bad JSON envelope" in parsed.problems[0].message
    assert parsed.counters["skipped_payload_lines"] == 12  # lines 23-34, the cut record's payload
    assert parsed.counters["blank_lines"] == 1
    assert parsed.counters["unknown_kind:future_kind"] == 1
    assert parsed.counters["kind:str"] == 7  # 8 str records in comp_failure.log, one renamed
    # comp_failure.log has 21 records: one renamed (still a record), one cut
    assert parsed.counters["records"] == 20
    assert len(parsed.rows["compilations"]) == 1
    assert parsed.counters["md5_verified"] == 7


def test_a_file_that_is_not_a_trace_gives_a_bounded_number_of_problems():
    path = TT / "cpu-torch2.13-dynamic" / "output_code_copies" / "model__5_forward_12.8" / "output_code.py"
    lines = path.read_bytes().splitlines(keepends=True)
    foreign = sum(1 for line in lines if line.strip() and not line.startswith(b"\t"))
    assert foreign > 100
    parsed = parse_torch_trace(lines)
    assert len(parsed.problems) == 100
    assert parsed.counters["line_problems_not_reported"] == foreign - 100
    assert parsed.counters["records"] == 0


def test_blank_lines_inside_a_payload_are_skipped():
    with gzip.open(COMP_FAILURE, "rb") as f:
        lines = f.read().split(b"\n")
    # a blank line after every line, payload lines included
    parsed = parse_torch_trace([x for line in lines for x in (line, b"")])
    assert parsed.problems == []
    assert parsed.counters["blank_lines"] == len(lines)
    assert parsed.counters["md5_verified"] == 8
    # one failed compile: its dynamo_error artifact and its metrics' fail_type are one failure
    assert len(_events(parsed, "failure")) == 1


def test_gzip_stream_plain_lines_and_crlf_give_the_same_rows():
    with gzip.open(COMP_FAILURE, "rb") as f:
        raw = f.read()
    from_stream = _parse(COMP_FAILURE)
    stripped = parse_torch_trace(raw.split(b"\n"))
    crlf = raw.replace(b"\n", b"\r\n")
    crlf_lines = parse_torch_trace(crlf.splitlines(keepends=True))
    crlf_split_on_lf = parse_torch_trace(crlf.split(b"\n"))
    for parsed in (stripped, crlf_lines, crlf_split_on_lf):
        assert parsed.problems == []
        assert parsed.counters["md5_verified"] == from_stream.counters["md5_verified"] == 8
        assert parsed.rows["compile_events"] == from_stream.rows["compile_events"]
        assert parsed.rows["timings"] == from_stream.rows["timings"]


def test_is_torch_trace_sniffs_content():
    for path in ALL_LOGS:
        with gzip.open(path, "rb") as f:
            head = f.read(4096)
        assert is_torch_trace(head)
        assert is_torch_trace(b"\n[rank3]:" + head)
    torch_logs = FIXTURES / "torch_logs" / "dyn_graphbreak__infer__fp32__default.torch_logs.txt"
    assert not is_torch_trace(torch_logs.read_bytes()[:4096])
    output_code = next(TT.glob("cpu-torch2.13-dynamic/output_code_copies/*/output_code.py"))
    assert not is_torch_trace(output_code.read_bytes()[:4096])


def test_graph_breaks_recompiles_and_restarts_of_the_dynamic_model():
    parsed = _parse(DYNAMIC_213)
    breaks = [e for e in parsed.rows["compile_events"] if e["kind"].endswith("break")]
    # payload first lines: `Graph break in user code at /home/user/corpus/gen_models.py:36` (twice) and :37;
    # :36 is torch._dynamo.graph_break() (Dynamo counts it), :37 the frame's own data-dependent branch
    # (generic_jump: Dynamo files it under counters["unimplemented"])
    assert [(e["compile_id"], e["kind"], e["user_file"], e["user_line"], e["cause_id"]) for e in breaks] == [
        ("0/0", "graph_break", "/home/user/corpus/gen_models.py", 36, "gb0025"),
        ("1/0", "uncounted_break", "/home/user/corpus/gen_models.py", 37, "gb0170"),
        ("0/1", "graph_break", "/home/user/corpus/gen_models.py", 36, "gb0025"),
        ("1/1", "uncounted_break", "/home/user/corpus/gen_models.py", 37, "gb0170"),
    ]
    assert {e["origin"] for e in breaks} == {"model"}
    assert breaks[1]["reason"].startswith("Graph Break Reason: Data-dependent branching")
    assert "Traceback" not in breaks[0]["reason"]
    assert [(e["compile_id"], e["reason"]) for e in _events(parsed, "recompile")] == [
        ("0/1", "0/0: tensor 'x' rank mismatch. expected 2, actual 3"),
        ("1/1", "1/0: tensor 'y' rank mismatch. expected 2, actual 3"),
        ("2/1", "2/0: tensor 'y' rank mismatch. expected 2, actual 3"),
    ]
    restarts = _events(parsed, "restart")
    assert [e["compile_id"] for e in restarts] == ["0/0", "0/1"]
    assert all(e["reason"].startswith("Call to `torch._dynamo.graph_break()`") for e in restarts)
    assert all(e["source"] == "torch_trace" for e in parsed.rows["compile_events"])


def test_compile_ids_as_the_trace_writes_them():
    dynamic = _parse(DYNAMIC_213)
    # the `[id] model__... debug trace` warnings of this run's stderr.txt name these graphs
    assert dynamic.facts["graph_compile_ids"] == {
        "0_forward": "0/0_1", "0_backward": "0/0_1", "1_inference": "1/0", "2_forward": "2/0",
        "2_backward": "2/0", "3_forward": "0/1_1", "3_backward": "0/1_1", "4_inference": "1/1",
        "5_forward": "2/1", "5_backward": "2/1",
    }
    # compilation_metrics name the frame compile, without the restart attempt
    assert [c["compile_id"] for c in dynamic.rows["compilations"]] == ["0/0", "1/0", "2/0", "0/1", "1/1", "2/1"]

    ca = _parse(CA_2141)
    assert {g["graph_id"]: g["compile_id"] for g in ca.rows["graphs"]} == {
        "0_forward": "0/0_1", "1_inference": "!0/7/0", "2_inference": "!1/9/0",
    }
    ids = [c["compile_id"] for c in ca.rows["compilations"]]
    assert "!0/7/0" in ids and "!1/9/0" in ids
    # chromium events of a compiled-autograd graph without a frame say `!0`; the envelope spelling is `!0/-/-`
    timing_ids = {t["compile_id"] for t in ca.rows["timings"] if t["source"] == "chromium_event"}
    assert {"!0/-/-", "!1/-/-", "!0/7/0"} <= timing_ids

    # 2.6 wrote compiled-autograd graphs with plain ids
    assert [g["compile_id"] for g in _parse(CA_26).rows["graphs"]] == ["0/0_1", "1/0", "3/0"]


def _output_code_kernels(text: str) -> int:
    return len(re.findall(r"^\w+ = async_compile\.\w+\(", text, re.MULTILINE))


def _debug_tree_graphs(torchinductor: Path) -> dict[str, tuple[int, int]]:
    """graph_id -> (kernel definitions in output_code.py, compile order from the folder suffix)."""
    graphs = {}
    for oc in torchinductor.glob("*/output_code.py"):
        m = re.match(r".*__(\d+)_([a-z]+)_\d+\.(\d+)$", oc.parent.name)
        graphs[f"{m.group(1)}_{m.group(2)}"] = (_output_code_kernels(oc.read_text()), int(m.group(3)))
    return graphs


def test_trace_only_kernel_counts_equal_the_debug_tree_of_the_same_process():
    parsed = _parse(DYNAMIC_213)
    tree = _debug_tree_graphs(DYNAMIC_213.parent / "output_code_copies")
    assert len(tree) == 10
    assert {g["graph_id"]: (g["kernel_count"], g["compile_order"]) for g in parsed.rows["graphs"]} == tree
    per_graph = Counter(k["graph_id"] for k in parsed.rows["kernels"] if k["generated"])
    assert dict(per_graph) == {g: n for g, (n, _) in tree.items() if n}
    assert all(g["source"] == "torch_trace" and g["folder"] is None for g in parsed.rows["graphs"])


def test_ops_follow_the_post_grad_graph_of_each_output_code():
    parsed = _parse(DYNAMIC_213)
    headers = _headers(DYNAMIC_213)
    assert _count(headers, '"name": "inductor_post_grad_graph"') == 10
    ops_per_graph = Counter(o["graph_id"] for o in parsed.rows["ops"])
    assert set(ops_per_graph) == {g["graph_id"] for g in parsed.rows["graphs"]}
    # 0_forward's post-grad graph (hand-read): 4 placeholders (primals_1..3, sym size s77),
    # permute, addmm, tanh, mul_6 and the output node
    assert [o["name"] for o in parsed.rows["ops"] if o["graph_id"] == "0_forward"][-5:] == [
        "permute", "addmm", "tanh", "mul_6", "output",
    ]
    assert parsed.counters["post_grad_graph_without_output_code"] == 0


def test_timings_from_metrics_and_chromium_spans():
    parsed = _parse(DYNAMIC_213)
    metrics = {(t["compile_id"], t["name"]): t["duration_us"] for t in parsed.rows["timings"]
               if t["source"] == "compilation_metrics"}
    # first compilation_metrics record: entire_frame_compile_time_s 18.888327, code_gen_time_s 17.913203,
    # dynamo_cumulative_compile_time_us 18888327, triton_compile_time_us 1954433
    assert metrics[("0/0", "entire_frame_compile_time")] == pytest.approx(18888327.0)
    assert metrics[("0/0", "code_gen_time")] == pytest.approx(17913203.0)
    assert metrics[("0/0", "dynamo_cumulative_compile_time")] == 18888327.0
    assert metrics[("0/0", "triton_compile_time")] == 1954433.0
    assert ("0/0", "runtime_triton_autotune_time") not in metrics  # null in the record

    spans = [t for t in parsed.rows["timings"] if t["source"] == "chromium_event"]
    with gzip.open(DYNAMIC_213, "rt", encoding="utf-8") as f:
        begins = sum(line == '\t"name": "entire_frame_compile",\n' for line in f) // 2
    assert sum(t["calls"] for t in spans if t["name"] == "entire_frame_compile") == begins == 6
    assert all(t["kind"] == "compile" and t["duration_us"] >= 0 for t in spans)


def test_failures_from_metrics_and_dynamo_error():
    parsed = _parse(COMP_FAILURE)
    # the dynamo_error traceback (line 86) and the metrics' fail_type (line 145) report one failure:
    # it is stored once, as compilation_metrics' fail_type/fail_reason say it
    (failure,) = _events(parsed, "failure")
    assert failure["reason"] == "BackendCompilerFailed: backend='broken_backend' raised:\nRuntimeError: broken backend"
    assert failure["compile_id"] == "0/0"
    # a hard failure, but the test suppressed errors (the metrics' config_suppress_errors is true):
    # the frame ran eagerly
    assert failure["fallback"] is True
    # the same log without its metrics record: the dynamo_error's failure stands alone
    with gzip.open(COMP_FAILURE, "rb") as f:
        lines = f.read().split(b"\n")
    cut = parse_torch_trace([x for x in lines if b'{"compilation_metrics": ' not in x])
    (alone,) = _events(cut, "failure")
    assert alone["reason"].startswith("torch._dynamo.exc.BackendCompilerFailed: backend='broken_backend'")
    assert alone["fallback"] is None  # a hard failure, and the record that says whether errors were suppressed never came
    (comp,) = parsed.rows["compilations"]
    assert comp["fail_type"] == "BackendCompilerFailed"
    assert comp["restart_reasons"] == []
    assert comp["record_kind"] == "compilation_metrics" and comp["record"].startswith("{")
    # metrics of this old log carry no compile_id: the envelope's is used
    assert comp["compile_id"] == "0/0"


def test_guards_lineage_and_facts():
    parsed = _parse(DYNAMIC_213)
    # leaf guards (`+- UPPER_CASE:` lines) of the first guard tree, counted by hand: 41
    assert [g["guard_count"] for g in parsed.rows["guards"]] == [41, 11, 39, 44, 16, 42]
    assert parsed.rows["guards"][0]["text"].lstrip().startswith("TREE_GUARD_MANAGER:")

    # first kernel_stack_traces artifact: {"extern_kernels.addmm:1": [..line 35..], "cpp_fused_mul_tanh_0:2": [..line 35..]}
    first = [r for r in parsed.rows["lineage"] if r["graph_id"] == "0_forward" and r["source"] == "torch_trace"]
    assert [(r["kernel_name"], r["debug_handle"], r["user_file"], r["user_line"]) for r in first][:2] == [
        ("extern_kernels.addmm", 1, "/home/user/corpus/gen_models.py", 35),
        ("cpp_fused_mul_tanh_0", 2, "/home/user/corpus/gen_models.py", 35),
    ]

    facts = parsed.facts
    # torch_version artifact: {"pytorch_version": "2.13.0+cpu", "commit": "cf30153c..."}
    assert facts["compiler_version"] == "2.13.0+cpu"
    assert facts["compiler_commit"] == "cf30153c4c131c8164ee7798e5022d810682e2cb"
    # first line: `V1122 00:09:17.733000 18849 ...`; start_time 1795306157.7 s is in 2026
    assert facts["pid"] == 18849
    assert facts["started_at"] == "2026-11-22T00:09:17.733000"
    assert facts["device"] == "cpu" and facts["backend"] == "cpp"
    assert facts["python_version"].startswith("3.11.7")
    assert "rank" not in facts


def test_old_logs_without_year_or_version():
    parsed = _parse(COMP_FAILURE)
    # no start_time in its metrics: the glog date alone (`V1206`) is kept
    assert "started_at" not in parsed.facts
    assert parsed.facts["started_mmdd"] == "1206"
    assert parsed.facts["pid"] == 1543231
    assert "compiler_version" not in parsed.facts


def test_rank_prefix_gives_the_rank():
    with gzip.open(COMP_FAILURE, "rb") as f:
        lines = [b"[rank3]:" + line if line[:1] != b"\t" else line for line in f]
    assert parse_torch_trace(lines).facts["rank"] == 3


# -- whole corpus -------------------------------------------------------------------------


CORPUS_ARCHIVES = ("cpu-torch2.6.0.tar.xz", "cpu-torch2.13.tar.xz", "cpu-torch2.14.1.tar.xz", "gpu-h200-torch2.11.tar.xz")


def _corpus_runs() -> list[Path]:
    return [t.parent for archive in CORPUS_ARCHIVES for t in sorted(unpacked_corpus(archive).glob("*/*/trace"))]


@pytest.mark.corpus
def test_every_corpus_log_parses_and_verifies():
    logs = sorted(corpus_path("tlparse-logs").rglob("*.log"))
    logs += [log for run in _corpus_runs() for log in (run / "trace").glob("*.log")]
    assert len(logs) == 9 + 15 + 67
    mismatches = 0
    for log in logs:
        parsed = _parse(log)
        headers = _headers(log)
        assert parsed.counters["records"] == len(headers), log
        assert len(parsed.rows["compilations"]) == _count(headers, '] {"compilation_metrics": ') + _count(
            headers, '] {"bwd_compilation_metrics": '), log
        breaks = len(_events(parsed, "graph_break")) + len(_events(parsed, "uncounted_break"))
        assert breaks + parsed.counters["graph_break_of_a_skipped_frame"] == _count(
            headers, '"name": "dynamo_graph_break_reason"'), log
        graph_ids = [g["graph_id"] for g in parsed.rows["graphs"]]
        assert len(set(graph_ids)) == len(graph_ids) == _count(headers, '] {"inductor_output_code": '), log
        mismatches += parsed.counters["md5_mismatch"]
        assert parsed.counters["md5_verified"] + parsed.counters["md5_mismatch"] == _count(headers, '"has_payload": ')
        if log.name != "simple_corrupted_json.log":
            assert parsed.problems == [], log
    assert mismatches == 1  # simple_corrupted_json.log only


@pytest.mark.corpus
def test_crlf_rank_log_verifies():
    log = corpus_path("tlparse-logs", "multi_rank_logs", "dedicated_log_torch_trace_rank_1.log")
    parsed = _parse(log)
    assert parsed.problems == []
    assert parsed.counters["md5_verified"] == _count(_headers(log), '"has_payload": ') == 733
    recompiles = _events(parsed, "recompile")
    # 14 recompiles, each listing the failed guard of every earlier entry: 1 + 2 + ... + 14
    assert len(recompiles) == 14 and sum(len(e["details"]) for e in recompiles) == sum(range(1, 15))


@pytest.mark.corpus
def test_corpus_kernel_counts_equal_the_debug_trees():
    for run in _corpus_runs():
        (log,) = (run / "trace").glob("*.log")
        (torchinductor,) = run.glob("torch_compile_debug/*/torchinductor")
        parsed = _parse(log)
        got = {g["graph_id"]: (g["kernel_count"], g["compile_order"]) for g in parsed.rows["graphs"]}
        assert got == _debug_tree_graphs(torchinductor), run


def test_payloads_with_tabs_inside_their_lines_verify_and_keep_them():
    """Payload lines start with a TAB that is not part of the payload; a TAB inside a line is. The
    log's payloads get one TAB inside each non-empty line, their has_payload md5 made anew: every
    one must verify, which it does only if the TABs inside are kept and the leading ones dropped."""
    with gzip.open(DYNAMIC_213, "rb") as f:
        lines = f.read().split(b"\n")
    out, header, payload, tabbed = [], None, [], 0

    def close():
        nonlocal header, payload
        if header is not None:
            md5 = hashlib.md5(b"\n".join(payload)).hexdigest().encode()
            out.append(re.sub(rb'"has_payload": "[0-9a-f]+"', b'"has_payload": "' + md5 + b'"', header))
            out.extend(b"\t" + p for p in payload)
        header, payload = None, []

    for line in lines:
        if line.startswith(b"\t") and header is not None:
            content = line[1:]
            if content:
                content = content[:1] + b"\t" + content[1:]
                tabbed += 1
            payload.append(content)
            continue
        close()
        if b'"has_payload": "' in line:
            header = line
        else:
            out.append(line)
    close()
    assert tabbed > 1000
    parsed = parse_torch_trace(out)
    assert parsed.counters["md5_mismatch"] == 0
    assert parsed.counters["md5_verified"] == _count(_headers(DYNAMIC_213), '"has_payload": ')
    guards = [g["text"] for g in parsed.rows["guards"] if g.get("text")]
    assert guards and all("\t" in g for g in guards)


def test_json_that_can_be_no_dict_key_where_a_scalar_belongs_is_counted_not_a_crash():
    """A name, pid, tid or file index written as a list or an object (no dict key) once raised
    TypeError out of the parser, losing the log. In the 2.13 log: the first graph break's artifact
    name, the first span's pid and the first create_symbol's innermost user file become lists, and a
    graph_dump named by an object is added; each is counted and every other row is kept."""
    with gzip.open(DYNAMIC_213, "rb") as f:
        lines = f.read().split(b"\n")
    out, mutated, i = [], set(), 0
    while i < len(lines):
        line = lines[i]
        payload = []
        while i + 1 < len(lines) and lines[i + 1].startswith(b"\t"):
            i += 1
            payload.append(lines[i][1:])
        i += 1
        if "name" not in mutated and b'"name": "dynamo_graph_break_reason"' in line:
            line = line.replace(b'"name": "dynamo_graph_break_reason"', b'"name": ["dynamo_graph_break_reason"]')
            mutated.add("name")
        elif "pid" not in mutated and b'{"chromium_event"' in line and b'"ph": "B"' in b"".join(payload):
            payload = [re.sub(rb'"pid": (\d+)', rb'"pid": [\1]', p) for p in payload]
            md5 = hashlib.md5(b"\n".join(payload)).hexdigest().encode()
            line = re.sub(rb'"has_payload": "[0-9a-f]+"', b'"has_payload": "' + md5 + b'"', line)
            mutated.add("pid")
        elif "file" not in mutated and b'{"create_symbol"' in line:
            line = line.replace(b'"user_stack": [{"line": 35, "name": "forward", "filename": 1,',
                                b'"user_stack": [{"line": 35, "name": "forward", "filename": [1],', 1)
            mutated.add("file")
        out.append(line)
        out.extend(b"\t" + p for p in payload)
    assert mutated == {"name", "pid", "file"}
    out.append(b'V1122 00:09:41.000000 18849 torch/_inductor/graph.py:1] {"graph_dump": {"name": {"a": 1}}, '
               b'"frame_id": 0, "frame_compile_id": 0, "attempt": 0}')
    good, bad = parse_torch_trace(lines), parse_torch_trace(out)
    assert bad.problems == good.problems == []
    assert bad.counters["md5_verified"] == good.counters["md5_verified"]
    assert bad.counters["records"] == good.counters["records"] + 1
    assert bad.counters["unknown_artifact:['dynamo_graph_break_reason']"] == 1
    # kept whole, as a row of its own
    assert [(r["n"], r["handling"], r["line"] is not None) for r in bad.rows["trace_records"]
            if (r["record_kind"], r["name"]) == ("artifact", "['dynamo_graph_break_reason']")] == [(1, "unknown", True)]
    assert bad.counters["graph_dump:{'a': 1}"] == 1
    # the span whose begin was unusable ends without one
    assert bad.counters["chromium_event_unusable"] == good.counters["chromium_event_unusable"] + 1
    assert bad.counters["chromium_end_without_begin"] == good.counters["chromium_end_without_begin"] + 1
    # that create_symbol's user frame is the only other one of its stack: torch's F.linear
    first = [(e["symbol"], e["user_file"], e["user_line"]) for e in bad.rows["shape_events"]][0]
    assert first[0] == "s77" and first[1].endswith("torch/nn/modules/linear.py") and first[2] == 134
    assert len(bad.rows["shape_events"]) == len(good.rows["shape_events"])
    breaks = len(_events(good, "graph_break")) + len(_events(good, "uncounted_break"))
    assert len(_events(bad, "graph_break")) + len(_events(bad, "uncounted_break")) == breaks - 1
    for table in ("graphs", "kernels", "compilations", "guards", "ops"):
        assert len(bad.rows[table]) == len(good.rows[table]) > 0, table
