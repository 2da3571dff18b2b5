"""TORCH_LOGS text as people paste and save it (tests/fixtures/SOURCES.md): recognised whatever its
name and however long the output before torch's first tagged line, its prefixes found after other
output on the same line, torch 2.0/2.1's prefix read, and a loss said as a warning row."""

from __future__ import annotations

import json
import re

import pytest

from inductor_warehouse.ingest.discover import discover
from inductor_warehouse.ingest.listing import LONG_SNIFF_BYTES, SNIFF_BYTES
from inductor_warehouse.ingest.load import ingest_paths
from inductor_warehouse.ingest.parsers.torch_logs import is_torch_logs, parse_torch_logs
from tests.conftest import FIXTURES, reader

LOGS = FIXTURES / "torch_logs"
SANDBOX = LOGS / "yaoshiang__sandbox" / "example_compile_lowerings.log"
VLLM = LOGS / "vllm-project__vllm" / "issue8821_recompiles_verbose.log"
PT99091 = LOGS / "pytorch__pytorch" / "issue99091_recompiles.log"
BLOG = LOGS / "pytorch__pytorch.github.io" / "accelerating_generative_ai_4.graph_breaks.log"
# a model's printout, as torch prints nn.Module: what a capture may hold before its first compile
PRINTOUT = "".join(f"    ({i}): Linear(in_features=4096, out_features=4096, bias=True)\n" for i in range(2000))


def run_folder(tmp_path, files: dict[str, str | bytes]):
    """A run folder as docs/ingesting.md lays one out: a manifest and the files."""
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "manifest.json").write_text(json.dumps({"model": "m"}))
    for name, content in files.items():
        (tmp_path / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    return tmp_path


def kinds(folder) -> dict[str, str]:
    """The kind of each file of the folder's runs but the manifest; an unrecognised file is absent."""
    return {a.path.name: a.kind for run in discover([folder]).runs for a in run.artifacts if a.kind != "manifest"}


def test_first_graph_break_past_the_sniffed_head_is_recognised(tmp_path):
    text = SANDBOX.read_bytes()
    assert text.index(b"[__graph_breaks]") > SNIFF_BYTES  # what the old sniff missed
    assert kinds(run_folder(tmp_path, {"compile.log": text})) == {"compile.log": "torch_logs"}


def test_graph_break_of_the_sandbox_capture(tmp_path):
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([run_folder(tmp_path / "run", {"compile.log": SANDBOX.read_bytes()})], db)
    # the file's one graph-break message, read with plain string work
    lines = SANDBOX.read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if "[__graph_breaks] Graph break in user code at " in line)
    at = lines[first].rsplit(" at ", 1)[1]
    reason = lines[first + 1].split("Graph Break Reason: ", 1)[1]
    compile_id = re.search(r"\] \[(\d+/\d+)\] \[__graph_breaks\]", lines[first]).group(1)
    con = reader(db)
    got = con.execute("SELECT compile_id, kind, reason, user_file, user_line FROM compile_events").fetchall()
    assert got == [(compile_id, "graph_break", reason, at.rsplit(":", 1)[0], int(at.rsplit(":", 1)[1]))]
    assert (compile_id, reason, at.rsplit(":", 1)[1]) == ("1/0", "Unsupported Tensor.backward() call", "420")
    assert con.execute("SELECT count(*) FROM ingest_errors").fetchone() == (0,)


def test_long_output_before_the_first_tagged_line(tmp_path):
    # and text without TORCH_LOGS, longer than the long look, is still unrecognised
    folder = run_folder(tmp_path, {"run.log": PRINTOUT + VLLM.read_text(), "train.log": PRINTOUT * 3})
    assert SNIFF_BYTES < len(PRINTOUT) < LONG_SNIFF_BYTES
    assert kinds(folder) == {"run.log": "torch_logs"}
    assert discover([folder]).skipped == {"unrecognised file": 1}


def test_files_that_only_name_a_tag_are_not_claimed():
    # prose about TORCH_LOGS, and glog lines of a C++ program: no torch logger line in either
    assert not is_torch_logs(b"grep the capture for [__graph_breaks] and [__recompiles] lines\n")
    assert not is_torch_logs(b"I0925 13:34:27.040958 4187 server.cc:88] listening on [__any__]: port 80\n")
    assert not is_torch_logs(b"x = obj.__dict__\ny = cls.__name__: [DEBUG] nothing\n")
    assert is_torch_logs(SANDBOX.read_bytes()[:SNIFF_BYTES])  # [__graph_code] and [__aot_graphs] lines
    assert is_torch_logs(PT99091.read_bytes())


def test_prefix_after_a_progress_bar():
    text = VLLM.read_text()
    lines = text.splitlines()
    glued = next(line for line in lines if "[__recompiles_verbose] Recompiling function" in line)
    assert not glued.startswith("[rank0]:")  # the tqdm bar wrote no newline
    parsed = parse_torch_logs(lines)
    failures = [line.split("[__recompiles_verbose]     - ", 1)[1].strip() for line in lines
                if "[__recompiles_verbose]     - " in line]
    where = glued.rsplit(" in ", 1)[1]
    assert [(r["compile_id"], r["kind"], r["user_file"], r["user_line"], r["details"])
            for r in parsed.rows["compile_events"]] == [
        ("0/7", "recompile", where.rsplit(":", 1)[0], int(where.rsplit(":", 1)[1]), failures)]
    assert len(failures) == 2 and where.endswith("llama.py:440")
    assert parsed.problems == []


def test_a_tagged_line_it_cannot_read_is_a_warning():
    lines = VLLM.read_text().splitlines()
    broken = [line.replace("[rank0]:V0925 13:34:27.040958", "[rank0]:V0925 13:34") for line in lines]
    parsed = parse_torch_logs(broken)
    assert parsed.counters["torch_logs.unrecognised_prefix"] == sum("[__recompiles_verbose]" in x for x in lines)
    assert [(p.severity, "[__recompiles_verbose]" in p.message) for p in parsed.problems][0] == ("warning", True)


def test_torch21_graph_break():
    parsed = parse_torch_logs(BLOG.read_text().splitlines())
    first = BLOG.read_text().splitlines()[0]
    reason = first.split("[DEBUG] Graph break: ", 1)[1].removesuffix(" from user code at:")
    frame = re.search(r'File "([^"]+)", line (\d+)', BLOG.read_text())
    assert [(r["compile_id"], r["kind"], r["reason"], r["user_file"], r["user_line"])
            for r in parsed.rows["compile_events"] if r["kind"] != "unknown_uncounted"] == [
        ("1/0_2", "graph_break", reason, frame.group(1), int(frame.group(2)))]
    assert frame.group(1).endswith("vocoder.py") and frame.group(2) == "49"
    # a log of a release before 2.6 (here 2.1) logs no data-dependent branch: it cannot tell them
    assert [r["kind"] for r in parsed.rows["compile_events"]].count("unknown_uncounted") == 1
    assert parsed.problems == []


def test_a_recognised_file_that_yields_nothing_says_so(tmp_path):
    # a 2023 nightly logged its recompiles as a tuple: recognised, unreadable, and said
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([run_folder(tmp_path / "run", {"recompiles.log": PT99091.read_bytes()})], db)
    con = reader(db)
    n = PT99091.read_text().count(".__recompiles: [DEBUG]")
    assert con.execute("SELECT count(*) FROM compile_events").fetchone() == (0,)
    errors = con.execute("SELECT path, kind, severity, message FROM ingest_errors").fetchall()
    assert len(errors) == 1 and errors[0][:3] == ("recompiles.log", "torch_logs", "warning")
    assert f"{n} [__recompiles]" in errors[0][3] and n == 4


@pytest.mark.parametrize("name", ["torch_logs.txt", "stderr.txt"])
def test_a_capture_without_torch_logs_is_quiet(tmp_path, name):
    (tmp_path / name).write_text(PRINTOUT[:2000] + "Traceback (most recent call last):\n  x.__init__\n")
    assert parse_torch_logs((tmp_path / name).read_text().splitlines()).problems == []
