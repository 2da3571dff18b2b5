"""TORCH_TRACE logs of every era ingest with the rows they can give, in one batch, and no failure.

Real logs from tlparse's test inputs (tests/fixtures/torch_trace/eras, SOURCES.md): 2.3/2.4 logs
with a 64-bit thread id where later logs have the pid and no torch version record, a `link`
record, a torch.export log, an AOTInductor provenance log without output code. One hand-written
log holds the header forms no real sample here has (paths with spaces, a Windows path, the
site-packages form, a `[rank1]:` prefix, a runtime record without `attempt`, an unknown kind).
Expected values are counted from the files with plain string matching, not by the parser.
"""

from __future__ import annotations

import gzip
import itertools
import re
from pathlib import Path

import pytest

from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.ingest.parsers.torch_trace import MAX_PID, parse_torch_trace
from tests.conftest import reader, FIXTURES

ERAS = FIXTURES / "torch_trace" / "eras"
LOGS = sorted(ERAS.iterdir())
HEADER = re.compile(r"^(?:\[rank\d+\]:)?[VIWEC]\d{4} [\d:.]+ (\d+) ")


def lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return f.read().splitlines()


def headers(path: Path) -> list[str]:
    return [line for line in lines(path) if line and not line.startswith("\t")]


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("eras") / "wh.duckdb")
    summary = ingest_paths([ERAS], db)
    assert summary.runs == len(LOGS), summary.line()
    con = reader(db)
    yield con
    con.close()


def run_of(con, path: Path) -> str:
    return con.execute("SELECT run_id FROM runs WHERE source_path = ?", [str(path)]).fetchone()[0]


def count(con, table: str, run_id: str, where: str = "true") -> int:
    return con.execute(f"SELECT count(*) FROM {table} WHERE run_id = ? AND {where}", [run_id]).fetchone()[0]


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_every_log_gives_its_compilations_and_no_errors(wh, path):
    run_id = run_of(wh, path)
    metrics = sum('] {"compilation_metrics": ' in h for h in headers(path))
    assert count(wh, "compilations", run_id) == metrics
    errors = wh.execute("SELECT message FROM ingest_errors WHERE run_id = ? AND severity = 'error'",
                        [run_id]).fetchall()
    assert errors == []


@pytest.mark.parametrize("path", [p for p in LOGS if p.name.startswith(("tlparse_2.3", "tlparse_2.4"))],
                         ids=lambda p: p.name)
def test_a_thread_id_in_the_pid_field_is_not_a_pid(wh, path):
    fourth = {int(HEADER.match(h).group(1)) for h in headers(path)}
    assert len(fourth) == 1 and fourth.pop() > 2**32  # what made the INT32 pid column fail
    pid, version, model = wh.execute("SELECT pid, compiler_version, model FROM runs WHERE run_id = ?",
                                     [run_of(wh, path)]).fetchone()
    assert pid is None and version is None  # no torch version record in these eras
    assert model == path.name.removesuffix(".log")
    parsed = parse_torch_trace(open(path, "rb"))
    assert parsed.facts["thread_id"] > MAX_PID and "pid" not in parsed.facts


def test_the_old_json_guards_and_output_code_of_2_4(wh):
    path = ERAS / "tlparse_2.4_links.log"
    run_id = run_of(wh, path)
    text = lines(path)
    assert count(wh, "guards", run_id) == sum('{"dynamo_guards"' in h or '{"dynamo_cpp_guards_str"' in h
                                              for h in headers(path))
    code = "\n".join(text)
    defined = len(re.findall(r"^\t(\w+) = async_compile\.(?:triton|cpp_pybinding|cpp)\(", code, re.M))
    assert count(wh, "kernels", run_id, "generated") == defined == 1


def test_an_aotinductor_provenance_log_keeps_its_ops_and_lineage(wh):
    """No inductor_output_code, no compile id: AOTInductor's wrapper and kernel code
    (`graph_dump` records inductor_aot_wrapper_code and inductor_aot_kernel_code) give the graph
    and its kernels, and the post-grad graph (the 2.8/2.9 artifact name after_post_grad_graph) and
    the node mappings its ops and lineage."""
    path = ERAS / "tlparse_aot_provenance.log.gz"
    run_id = run_of(wh, path)
    text = lines(path)
    start = next(i for i, h in enumerate(text) if '"name": "after_post_grad_graph"' in h)
    graph = []
    for line in text[start + 1:]:
        if not line.startswith("\t"):
            break
        graph.append(line[1:])
    declared = len(re.findall(r'(\w+): "[^"]*";', graph[2]))
    nodes = sum(bool(re.match(r'^\s+\w+(: "[^"]*")? = (torch\.ops\.|self\.)', g)) for g in graph)
    returns = sum(g.strip().startswith("return ") for g in graph)
    assert count(wh, "ops", run_id) == declared + nodes + returns == 4 + 13 + 1
    assert count(wh, "ops", run_id, "op_kind = 'placeholder'") == declared
    [(kernels, externs)] = wh.execute("SELECT kernel_count, extern_kernel_count FROM graphs WHERE run_id = ?",
                                      [run_id]).fetchall()
    code = {}
    for name in ("inductor_aot_wrapper_code", "inductor_aot_kernel_code"):
        at = next(i for i, h in enumerate(text) if f'"name": "{name}"' in h)
        code[name] = "\n".join(line[1:] for line in itertools.takewhile(lambda x: x.startswith("\t"), text[at + 1:]))
    # C++ kernels defined (with a body) in the kernel file; C-shim ATen calls in run_impl
    defined = set(re.findall(r'^extern "C"\s+void\s+(\w+)\([^)]*\)\s*\{', code["inductor_aot_kernel_code"], re.M))
    run_impl = code["inductor_aot_wrapper_code"].split("AOTInductorModel::run_impl(")[1].split("\n}")[0]
    shims = re.findall(r"\baoti_torch_cpu_\w+\(", run_impl)
    assert (kernels, externs) == (len(defined), len(shims)) == (2, 2)
    assert count(wh, "lineage", run_id) > 0
    assert count(wh, "ingest_errors", run_id) == 0


def test_hand_written_header_forms(wh):
    path = ERAS / "handwritten_header_forms.log"
    run_id = run_of(wh, path)
    hs = headers(path)
    assert any(" /home/user/my env/" in h for h in hs) and any(":\\Users\\" in h for h in hs)
    assert count(wh, "compilations", run_id) == 2
    assert count(wh, "compile_events", run_id, "kind = 'graph_break'") == 1
    assert count(wh, "compile_events", run_id, "kind = 'recompile'") == 1
    pid, rank, version = wh.execute("SELECT pid, rank, compiler_version FROM runs WHERE run_id = ?",
                                    [run_id]).fetchone()
    assert (pid, rank, version) == (4242, 1, "2.14.0a0+git1234567")
    # a value past 2^31 in a metric (param_numel) stays whole in the record
    assert wh.execute("SELECT record::JSON ->> 'param_numel' FROM compilations WHERE run_id = ? AND compile_id = '0/0'",
                      [run_id]).fetchone()[0] == "3000000000"
    parsed = parse_torch_trace(open(path, "rb"))
    assert parsed.counters["unknown_kind:some_future_kind"] == 1
    assert parsed.counters["md5_verified"] == sum('"has_payload"' in h for h in hs) == 3


def test_no_integer_column_is_32_bits(wh):
    narrow = wh.execute("""SELECT c.table_name || '.' || c.column_name FROM information_schema.columns c
                           JOIN information_schema.tables t USING (table_schema, table_name)
                           WHERE t.table_type = 'BASE TABLE' AND c.data_type IN ('INTEGER', 'SMALLINT', 'TINYINT')""").fetchall()
    assert narrow == []


def test_a_value_its_column_cannot_hold_is_stored_null_and_reported(tmp_path):
    """The loader's type boundary: a float with a fraction or a number past 64 bits in a BIGINT
    column, a list in a VARCHAR column: stored NULL or as JSON text, with a warning, never a failure."""
    from inductor_warehouse.ingest.convert import Columns
    from inductor_warehouse.store.opening import connect

    con = connect(str(tmp_path / "w.duckdb"))
    schema = Columns(con)
    con.close()
    misfits: list[dict] = []
    rows = [{"compile_id": "0/0", "co_firstlineno": 12, "graph_op_count": 2.5, "duration_us": 2**70,
             "guard_count": 7.0, "co_name": ["not", "text"]}]
    table = schema.arrow("compilations", [("r1", rows)], misfits)
    got = table.to_pylist()[0]
    assert (got["co_firstlineno"], got["graph_op_count"], got["duration_us"], got["guard_count"]) == (12, None, None, 7)
    assert got["co_name"] == '["not","text"]'
    assert sorted(m["message"].split(" of ")[1].split(" ")[0] for m in misfits) == [
        "compilations.duration_us", "compilations.graph_op_count"]
    assert all(m["severity"] == "warning" for m in misfits)


def test_a_name_past_64_kb_is_kept_cut_and_a_document_whole(tmp_path):
    """A name, a path, a shape past NAME_BYTES is damage (a 20 MB node name repeated on every lineage
    row, as the fuzzer made): kept cut, with a warning. Many names whose sum passes it are not; a
    document column (kernel details) keeps its text whole."""
    from inductor_warehouse.ingest.convert import NAME_BYTES, Columns
    from inductor_warehouse.store.opening import connect

    con = connect(str(tmp_path / "w.duckdb"))
    schema = Columns(con)
    con.close()
    misfits: list[dict] = []
    long_name, long_details = "n" * (NAME_BYTES + 10), "d" * (NAME_BYTES + 10)
    many = [{"kernel_name": f"triton_poi_fused_{i:06d}", "details": "{}"} for i in range(5000)]  # 115 KB of names
    rows = many + [{"kernel_name": long_name, "details": long_details}]
    got = schema.arrow("kernels", [("r1", rows)], misfits).to_pydict()
    assert got["kernel_name"][:5000] == [r["kernel_name"] for r in many]
    assert got["kernel_name"][5000] == long_name[:NAME_BYTES]
    assert got["details"][5000] == long_details
    [m] = misfits
    assert m["severity"] == "warning" and "1 value(s) of kernels.kernel_name are longer than 64 KB" in m["message"]
    misfits.clear()
    assert schema.arrow("kernels", [("r1", many)], misfits).to_pydict()["kernel_name"] == [r["kernel_name"] for r in many]
    assert misfits == []
    # the limit is in bytes: a name of 2-byte characters passes it with half as many, one of 3-byte
    # characters under it stays whole, and a cut never splits a character
    wide, under = "é" * (NAME_BYTES // 2 + 5), "€" * (NAME_BYTES // 3 - 1)
    got = schema.arrow("kernels", [("r1", [{"kernel_name": wide}, {"kernel_name": under}])], misfits).to_pydict()
    assert got["kernel_name"] == ["é" * (NAME_BYTES // 2), under]
    assert len(misfits) == 1 and "1 value(s) of kernels.kernel_name" in misfits[0]["message"]
    misfits.clear()
    odd = "x" + "é" * (NAME_BYTES // 2)  # the last character would be cut in two
    assert schema.arrow("kernels", [("r1", [{"kernel_name": odd}])], misfits).to_pydict()["kernel_name"] == [odd[:-1]]


@pytest.mark.parametrize("name", ["tlparse_2.3_comp_metrics.log", "tlparse_2.4_links.log", "tlparse_2.4_artifacts.log"])
def test_compile_time_of_releases_that_write_it_in_seconds(wh, name):
    """2.3 to 2.5 write compilation_metrics' four nested timers in seconds alone (2.6+ also as
    *_cumulative_compile_time_us): total and parts come from them, summed over the frames."""
    path = ERAS / name
    import json
    metrics = [json.loads(h.split("] ", 1)[1])["compilation_metrics"] for h in headers(path)
               if '] {"compilation_metrics": ' in h]
    assert metrics and all("dynamo_cumulative_compile_time_us" not in m for m in metrics)

    nested = ("entire_frame_compile_time_s", "backend_compile_time_s", "inductor_compile_time_s", "code_gen_time_s")

    def ran(m: dict, field: str) -> float | None:
        """A timer's value; 0 where the record carries it as null inside the backend's timer that ran
        (a cache hit skipped it), None where nothing says."""
        if m.get(field) is not None:
            return m[field]
        outer = nested[nested.index(field) - 1]
        inside = field in m and nested.index(field) >= 2 and m.get("fail_type") is None and ran(m, outer) is not None
        return 0.0 if inside else None

    def total(field: str) -> float | None:  # a timer no frame reports is unknown
        given = [v for m in metrics if (v := ran(m, field)) is not None]
        return sum(given) if given else None

    def minus(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else a - b

    frame, backend, inductor, code_gen = (total(f) for f in ("entire_frame_compile_time_s", "backend_compile_time_s",
                                                             "inductor_compile_time_s", "code_gen_time_s"))
    got = wh.execute("SELECT frames, total_s, dynamo_s, aot_s, inductor_s, code_gen_s FROM run_rollups "
                     "WHERE run_id = ?", [run_of(wh, path)]).fetchone()
    expected = (frame, minus(frame, backend), minus(backend, inductor), minus(inductor, code_gen), code_gen)
    assert got[0] == len(metrics)
    assert [g is None for g in got[1:]] == [e is None for e in expected]
    assert [g for g in got[1:] if g is not None] == pytest.approx([e for e in expected if e is not None], abs=1e-6)
    assert got[1] > 0
