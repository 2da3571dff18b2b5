"""max-autotune's candidates and winners, and dynamic shapes, on real runs.

Autotuning: the GPU captures (torch 2.11, H100, max-autotune: mlp, transformer, resnet18, BERT) and
the shared corpus's mlp max-autotune run made on an H200 (tests/fixtures/runs/gpu-torch2.11). The
tables are counted from stderr here with plain string matching; the winners of the trace's
autotuning spans are read with json, independently of the parser.

Dynamic shapes: the 2.6.0, 2.13 and 2.14.1 `dynamic` model logs; the expected per-compile counts
were counted from the logs by hand (research notes) and are checked against the log here too.
"""

from __future__ import annotations

import gzip
import json
import re
import tarfile
from collections import Counter

import pytest
from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.ingest.parsers.torch_trace import parse_torch_trace
from tests.conftest import CPU_CORPUS_ARCHIVES, FIXTURES, reader, unpack_gpu_captures

H200_RUN = FIXTURES / "runs" / "gpu-torch2.11" / "mlp__infer__bf16__max_autotune"
DYNAMIC_213 = FIXTURES / "torch_trace" / "cpu-torch2.13-dynamic" / "dedicated_log_torch_trace_r5h24g62.log.gz"


@pytest.fixture(scope="module")
def gpu(tmp_path_factory):
    root = tmp_path_factory.mktemp("autotune")
    captures = unpack_gpu_captures(root)
    db = str(root / "wh.duckdb")
    assert ingest_paths([captures, H200_RUN], db).errors == 0
    return db, [*sorted((captures / "autotune" / "cold").iterdir()), H200_RUN]


def tables(stderr: str) -> list[dict]:
    """The AUTOTUNE tables of a run's stderr: op, shapes, the rows' choices, the footer's count."""
    out, current = [], None
    for line in stderr.splitlines():
        if line.startswith("AUTOTUNE "):
            op, shapes = re.match(r"AUTOTUNE (\w+)\((.*)\)$", line).groups()
            current = {"op": op, "shapes": shapes, "choices": []}
        elif current is not None and line.startswith("  ") and " ms " in line:
            current["choices"].append(line.split()[0])
        elif current is not None and "AUTOTUNE benchmarking takes" in line:
            current["num_choices"] = int(re.search(r"for (\d+) choices", line).group(1))
            out.append(current)
            current = None
    return out


def span_winners(log: str) -> list[tuple[str, str, str]]:
    """(op, shapes, best_kernel) of each autotuning span's end, read with json."""
    out = []
    for block in re.split(r"\n(?=[^\t])", log):
        if '"chromium_event"' not in block.split("\n", 1)[0]:
            continue
        event = json.loads("\n".join(line[1:] for line in block.split("\n")[1:]))
        if event.get("ph") == "E" and event["name"].endswith("_template_autotuning"):
            stats = json.loads(event["args"]["autotune_choices_stats"])
            out.append((event["name"][: -len("_template_autotuning")], event["args"]["autotune_shape"],
                        stats["best_kernel"]))
    return out


def test_every_autotune_table_is_kept_with_its_winner(gpu):
    db, runs = gpu
    with reader(db) as con:
        for run in runs:
            printed = tables((run / "torch_logs.txt").read_text())
            rows = con.execute("""
                SELECT a.seq, a.op, a.shapes, a.rank, a.choice, a.winner, a.num_choices, a.compile_id
                FROM autotune_choices a JOIN runs r USING (run_id) WHERE r.source_path = ? ORDER BY a.seq, a.rank""",
                               [str(run)]).fetchall()
            assert printed and len(rows) == sum(len(t["choices"]) for t in printed), run.name
            by_seq = {}
            for seq, op, shapes, _rank, choice, winner, n, cid in rows:
                by_seq.setdefault(seq, []).append((op, shapes, choice, winner, n, cid))
            assert len(by_seq) == len(printed)
            for table, (_seq, got) in zip(printed, sorted(by_seq.items()), strict=True):
                assert [g[2] for g in got] == table["choices"]
                assert [g[3] for g in got] == [True] + [False] * (len(got) - 1)
                assert {(g[0], g[1], g[4]) for g in got} == {(table["op"], table["shapes"], table["num_choices"])}
                assert {g[5] for g in got} == {"0/0"}  # from the trace's span of the same place


def test_the_winners_equal_the_trace_spans_choice(gpu):
    """Two records of one decision: stderr's first row and the trace span's best_kernel agree."""
    db, runs = gpu
    with reader(db) as con:
        for run in runs:
            log = next(run.glob("trace/*.log")).read_text()
            winners = con.execute("""
                SELECT a.op, a.shapes, a.choice FROM autotune_choices a JOIN runs r USING (run_id)
                WHERE r.source_path = ? AND a.winner ORDER BY a.seq""", [str(run)]).fetchall()
            assert winners == span_winners(log), run.name


def test_the_winners_that_changed_between_an_h200_and_an_h100(gpu):
    """The same torch 2.11 mlp, autotuned on the corpus's H200 and on this project's H100: the canned
    query and `iwh compare --kernels` list the ops whose winner differs, counted from the two stderrs."""
    db, runs = gpu
    h100 = next(r for r in runs if r.name == "mlp__infer__bf16__max_autotune" and r != H200_RUN)
    def winners(run):
        printed = tables((run / "torch_logs.txt").read_text())
        return {(t["op"], t["shapes"]): re.sub(r"_\d+$", "", t["choices"][0]) for t in printed}
    a, b = winners(H200_RUN), winners(h100)
    changed = sorted(k for k in a if a[k] != b.get(k))
    assert changed  # the two machines picked differently
    res = CliRunner().invoke(cli, ["compare", "--base", "device_name=NVIDIA H200,variant=max_autotune",
                                   "--head", "cache=cold,variant=max_autotune", "--model", "mlp", "--kernels",
                                   "--format", "json", "--db", db])
    assert res.exit_code == 0, res.output
    diff = json.loads(res.stdout)["kernel_diff"]["autotune"]
    assert sorted((d["op"], d["shapes"]) for d in diff if d["status"] == "changed") == changed
    res = CliRunner().invoke(cli, ["query", "autotune/winners", "-p", "model=mlp", "--db", db, "--format", "json"])
    assert len(json.loads(res.output)) == len(a) + len(b)


def test_shape_events_per_compile_equal_the_records(tmp_path):
    """create_symbol, symbolic_shape_specialization and guard_added_fast per compile id, counted from
    the record headers; automatic_dynamic instants from the chromium payloads."""
    parsed = parse_torch_trace(gzip.open(DYNAMIC_213))
    got = Counter((r["compile_id"], r["kind"]) for r in parsed.rows["shape_events"])
    text = gzip.open(DYNAMIC_213, "rt").read()
    want = Counter()
    for kind, name in (("symbol", "create_symbol"), ("specialization", "symbolic_shape_specialization"),
                       ("guard", "guard_added_fast")):
        for m in re.finditer(r'\] \{"' + name + r'": .*"frame_id": (\d+), "frame_compile_id": (\d+), "attempt": (\d+)',
                             text):
            cid = f"{m.group(1)}/{m.group(2)}" + (f"_{m.group(3)}" if m.group(3) != "0" else "")
            want[(cid, kind)] += 1
    want.update(("/".join(m.group(1).split("/")), "automatic_dynamic")
                for m in re.finditer(r'"name": "automatic_dynamic".*?"compile_id": "([^"]+)"', text, re.S))
    assert got == want
    # by hand (research notes): 16 symbols, 3 specializations, 10 guards, 6 automatic_dynamic
    assert sum(v for (_, k), v in got.items() if k == "symbol") == 16
    assert sum(v for (_, k), v in got.items() if k == "specialization") == 3
    assert sum(v for (_, k), v in got.items() if k == "guard") == 10
    assert sum(v for (_, k), v in got.items() if k == "automatic_dynamic") == 6


def test_specializations_behind_recompiles_name_the_symbol_value_and_user_line(tmp_path):
    """The specializations of the `dynamic` model in three releases: which input dimension was pinned
    to which value, from which line of the model, in the compiles that recompiled."""
    roots = []
    for archive in CPU_CORPUS_ARCHIVES:
        with tarfile.open(archive) as tf:
            members = [m for m in tf.getmembers() if "/dynamic/" in m.name]
            tf.extractall(tmp_path / archive.name, members=members, filter="data")
        roots.append(tmp_path / archive.name)
    db = str(tmp_path / "wh.duckdb")
    ingest_paths(roots, db)
    res = CliRunner().invoke(cli, ["query", "shapes/specializations", "--db", db, "--format", "json"])
    rows = json.loads(res.output)
    got = sorted((r["compiler_version"].split("+")[0], r["compile_id"], r["source"], r["value"], r["user_line"])
                 for r in rows)
    # research notes, counted by hand: 0/1 and 0/1_1 pin x's dim 2 to 32 (line 35), 2/1 pins y's dim 2
    # to 64 (line 39), in every release; 0/1 restarted (its trace's restart), so 0/1_1's is the compile's
    for v in ("2.6.0", "2.13.0", "2.14.1"):
        assert [g[1:] for g in got if g[0] == v] == [
            ("0/1_1", "L['x'].size()[2]", "32", 35), ("2/1", "L['y'].size()[2]", "64", 39)], v
    assert all(r["recompile_reason"] for r in rows if r["compile_id"].startswith(("0/1", "2/1")))
    res = CliRunner().invoke(cli, ["query", "shapes/specializations_by_model", "--db", db, "--format", "json"])
    by_model = json.loads(res.output)
    assert {(r["compiler_version"].split("+")[0], r["specializations"]) for r in by_model} == {
        ("2.6.0", 2), ("2.13.0", 2), ("2.14.1", 2)}
