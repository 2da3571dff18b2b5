"""Graph breaks of TORCH_TRACE logs from releases that write no graph-break record (before 2.6).

tlparse's comp_metrics.log (tests/fixtures/torch_trace/eras, SOURCES.md) is a 2.4-era log of
test_misc.py's `fn`: `x.cos(); torch._dynamo.graph_break(); x.sin(); torch._dynamo.graph_break();
return x.cos()`, so Dynamo counted 2 graph breaks. Each break restarted its frame's analysis
(`[0/0_1]`, `[1/0_1]`) with the break's message in restart_reasons, and the frame resumed in
`torch_dynamo_resume_in_fn_at_*`. The other cases are that log edited the way other 2.3 to 2.5 runs
write it (ingest/parsers/trace_breaks.py cites the PyTorch code): a restart whose reason cannot tell a
counted break from an untraceable instruction, a failed compile (Dynamo drops its reasons), 2.3
(no compilation_metrics), a restart for an unspecialized nn.Module; each expected value is read from
the edited text, not from the parser.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

LOG = FIXTURES / "torch_trace" / "eras" / "tlparse_2.3_comp_metrics.log"
LINKS = FIXTURES / "torch_trace" / "eras" / "tlparse_2.4_links.log"
METRICS = re.compile(r'\{"compilation_metrics": (\{.*\}), "frame_id"')
BREAK = "'skip function graph_break in file /data/users/jjwu/a/pytorch/torch/_dynamo/decorators.py'"


def metrics_of(text: str) -> list[dict]:
    return [json.loads(m.group(1)) for m in map(METRICS.search, text.splitlines()) if m]


def restarted(text: str) -> int:
    """Compiles written with an attempt above 0 in their envelope."""
    return len({m for m in re.findall(r'"frame_id": (\d+), "frame_compile_id": (\d+), "attempt": [1-9]', text)})


def ingest(tmp_path: Path, logs: dict[str, str]) -> dict[str, tuple]:
    """{name: (graph_breaks, restarts, [(kind, reason)] of its graph_break and unknown_break rows)}."""
    for name, text in logs.items():
        (tmp_path / "logs" / name).mkdir(parents=True)
        (tmp_path / "logs" / name / "dedicated_log_torch_trace_x.log").write_text(text)
    db = str(tmp_path / "wh.duckdb")
    summary = ingest_paths([tmp_path / "logs"], db)
    assert summary.runs == len(logs) and summary.errors == 0, summary.line()
    with reader(db) as con:
        out = {}
        for run_id, path, gb, restarts in con.execute(
                "SELECT run_id, source_path, graph_breaks, restarts FROM run_metrics JOIN runs USING (run_id)").fetchall():
            events = con.execute("SELECT kind, reason FROM compile_events WHERE run_id = ? AND kind IN "
                                 "('graph_break', 'unknown_break') ORDER BY compile_id, kind", [run_id]).fetchall()
            out[Path(path).parent.name] = (gb, restarts, events)
    return out


def test_the_breaks_dynamo_counted_are_its_restarts_for_breaks(tmp_path):
    text = LOG.read_text()
    metrics = metrics_of(text)
    reasons = [r for m in metrics for r in m["restart_reasons"]]
    assert reasons == [BREAK, BREAK] and restarted(text) == 2
    assert [m["co_name"] for m in metrics] == ["fn", "torch_dynamo_resume_in_fn_at_9551",
                                               "torch_dynamo_resume_in_fn_at_9553"]
    one_break = "\n".join(text.splitlines()[:31]) + "\n"  # up to the first resume frame's metrics
    assert [m["restart_reasons"] for m in metrics_of(one_break)] == [[BREAK]]
    got = ingest(tmp_path, {"two": text, "one": one_break})
    assert got["two"] == (2, 2, [("graph_break", BREAK)] * 2)
    assert got["one"] == (1, 1, [("graph_break", BREAK)])


def test_a_log_that_cannot_tell_says_unknown_not_0(tmp_path):
    text = LOG.read_text()
    lines = text.splitlines(keepends=True)
    # the STORE_ATTR break and the untraceable instruction both restart with this reason (2.4, 2.5)
    ambiguous = text.replace(BREAK, "Unknown fail_and_restart_analysis", 2).replace(
        "Unknown fail_and_restart_analysis", BREAK, 1)
    assert ambiguous.count("Unknown fail_and_restart_analysis") == 1 and ambiguous.count(BREAK) == 1
    # a failed compile: Dynamo empties restart_reasons, the envelope still says attempt 1
    first = next(i for i, line in enumerate(lines) if '{"compilation_metrics": ' in line)
    failed = lines[first].replace(f'"restart_reasons": ["{BREAK}"]', '"restart_reasons": []').replace(
        '"fail_type": null', '"fail_type": "torch._dynamo.exc.BackendCompilerFailed"')
    assert '"attempt": 1' in failed and '"fail_type": "torch' in failed
    # 2.3.1 writes no compilation_metrics at all; its envelopes still carry the attempt
    no_metrics = "".join(line for line in lines if '{"compilation_metrics": ' not in line)
    assert not metrics_of(no_metrics) and restarted(no_metrics) == 2
    failed_log = "".join(lines[:first] + [failed] + lines[first + 1:])
    got = ingest(tmp_path, {"ambiguous": ambiguous, "failed": failed_log, "no_metrics": no_metrics})
    gb, restarts, events = got["ambiguous"]
    assert gb is None and restarts == 2
    assert events[0] == ("graph_break", BREAK)  # compile 0/0_1, then 1/0_1 whose reason was replaced
    assert events[1][0] == "unknown_break" and "STORE_ATTR" in events[1][1]
    gb, restarts, events = got["failed"]
    # the failed compile restarted too: its attempt counts though its reason was dropped
    assert gb is None and restarts == restarted(failed_log) == 2
    assert [k for k, _ in events] == ["unknown_break", "graph_break"] and "failed compile" in events[0][1]
    gb, restarts, events = got["no_metrics"]
    # the restarts are the attempts its envelopes name, though no record gives their reasons
    assert gb is None and restarts == restarted(no_metrics) and [k for k, _ in events] == ["unknown_break"] * 2


def test_restarts_that_are_no_break_and_logs_without_restarts_are_0(tmp_path):
    text = LOG.read_text()
    unspecialized = text.replace(BREAK, "<class 'torch._dynamo.exc.UnspecializeRestartAnalysis'>")
    links = LINKS.read_text()
    links_no_metrics = "".join(line for line in links.splitlines(keepends=True) if '{"compilation_metrics": ' not in line)
    assert restarted(links) == 0 and not metrics_of(links_no_metrics)
    # 2.6+ write log_format_version and a graph-break record for every break: those are the source
    modern = text.replace('"restart_reasons": [', '"log_format_version": 3, "restart_reasons": [')
    got = ingest(tmp_path, {"unspecialized": unspecialized, "links": links, "links_no_metrics": links_no_metrics,
                            "modern": modern})
    assert got["unspecialized"] == (0, 2, [])
    assert got["links"] == (0, 0, []) and got["links_no_metrics"] == (0, 0, [])
    assert got["modern"] == (0, 2, [])


def test_compare_does_not_gate_an_unknown_count(tmp_path):
    """A run that cannot tell its breaks against one that counts 2: no verdict, not a regression."""
    from inductor_warehouse.analysis.compare import compare
    from inductor_warehouse.analysis.regress import MISSING

    text = LOG.read_text()
    no_metrics = "".join(line for line in text.splitlines(keepends=True) if '{"compilation_metrics": ' not in line)
    for side, body in (("base", no_metrics), ("head", text)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "comp_metrics.log").write_text(body)
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([tmp_path / "base", tmp_path / "head"], db)
    with reader(db) as con:
        ids = dict(con.execute("SELECT regexp_extract(source_path, '(base|head)/', 1), run_id FROM runs").fetchall())
        result = compare(con, ids["base"], ids["head"])
    [pair] = result.pairs
    judged = pair.metrics["graph_breaks"]
    assert (judged.base, judged.head, judged.verdict) == (None, 2, MISSING)
    assert "graph_breaks" not in pair.regressions


@pytest.mark.parametrize("reason,counted", [
    (BREAK, True),
    ("Unknown fail_and_restart_analysis", False),
    ("<class 'torch._dynamo.exc.UnspecializeRestartAnalysis'>", False),
    ("<class 'torch._dynamo.exc.CompileCollectiveRestartAnalysis'>", False),
    ("<class 'torch._dynamo.exc.SpeculationRestartAnalysis'>", True),  # a break whose message was empty
])
def test_restart_reasons(reason, counted):
    from inductor_warehouse.ingest.parsers.trace_breaks import counted as is_counted

    assert is_counted(reason) is counted



def test_a_warehouse_written_before_says_ingest_again(tmp_path):
    """Migration 0041: a pre-2.6 run that restarted, ingested before, gets graph_breaks unknown and a
    row saying to ingest it again, not its old 0; a pre-2.6 run that never restarted keeps its 0."""
    import duckdb


    for name, path in (("restarted", LOG), ("calm", LINKS)):
        (tmp_path / name).mkdir()
        (tmp_path / name / path.name).write_bytes(path.read_bytes())
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([tmp_path / "restarted", tmp_path / "calm"], db)
    with duckdb.connect(db) as con:  # as written before: no rows from restart reasons, breaks 0
        con.execute("DELETE FROM compile_events WHERE kind IN ('graph_break', 'unknown_break')")
        con.execute("UPDATE run_rollups SET graph_breaks = 0")
        con.execute("DELETE FROM _migrations WHERE name = '0041_breaks_before_2_6'")
    ingest_paths([], db)  # the loader's writer: migrates, and makes the rollups again
    with reader(db) as con:
        got = dict(con.execute("SELECT regexp_extract(source_path, '/(restarted|calm)/', 1), graph_breaks "
                               "FROM run_metrics JOIN runs USING (run_id)").fetchall())
        why = con.execute("SELECT reason FROM compile_events WHERE kind = 'unknown_break'").fetchall()
    assert got == {"restarted": None, "calm": 0}
    assert len(why) == 1 and "ingest the log again" in why[0][0]
    ingest_paths([tmp_path / "restarted"], db, force=True)
    with reader(db) as con:
        assert con.execute("SELECT graph_breaks FROM run_metrics JOIN runs USING (run_id) "
                           "WHERE source_path LIKE '%/restarted/%'").fetchone() == (2,)


OLD = FIXTURES / "captures" / "cpu-torch2.3-2.7-old-releases.tar.xz"
# gbreak_dyn's forward (SOURCES.md): `print(...)` then `z.sum().item()`; Dynamo's registry (2.8+)
# files these call sites as gb0059 "Failed to trace builtin operator" and gb0124 "Unsupported
# Tensor.item() call with capture_scalar_outputs=False"; the tlparse log calls torch._dynamo.graph_break()
# (gb0025 "Call to `torch._dynamo.graph_break()`")
EXPECTED_CAUSE = {"print": "gb0059", "Tensor.item": "gb0124", "graph_break": "gb0025"}


def test_a_restart_carries_the_cause_of_the_break_that_restarted_it(tmp_path):
    """A 2.4/2.5 restart's reason is its break's message (convert_frame's restart_reasons): its
    cause is the break's registry id; a restart that names no message (a `<class ...>`) has none."""
    import tarfile

    with tarfile.open(OLD) as tf:
        tf.extractall(tmp_path / "old", filter="data")
    runs = [tmp_path / "old" / f"cpu-torch{v}" / "gbreak_dyn" for v in ("2.4.1", "2.5.1", "2.7.1")]
    (tmp_path / "tlparse").mkdir()
    (tmp_path / "tlparse" / LOG.name).write_bytes(LOG.read_bytes())
    # the reasons as the logs give them: every compilation_metrics' restart_reasons
    given = []
    for run in runs:
        [log] = (run / "trace").glob("*.log")
        given += [r for m in metrics_of(log.read_text()) for r in m.get("restart_reasons") or ()]
    given += [r for m in metrics_of(LOG.read_text()) for r in m["restart_reasons"]]
    db = str(tmp_path / "wh.duckdb")
    assert ingest_paths([*runs, tmp_path / "tlparse"], db).errors == 0
    with reader(db) as con:
        rows = con.execute("SELECT reason, cause_id FROM compile_events WHERE kind = 'restart'").fetchall()
    assert sorted(r for r, _ in rows) == sorted(given) and len(given) == 4 + 4 + 5 + 2
    for reason, cause in rows:
        if reason.startswith("<class '"):
            assert cause is None, reason  # 2.7.1's TensorifyScalarRestartAnalysis: no break's message
        else:
            [word] = [w for w in EXPECTED_CAUSE if w in reason]
            assert cause == EXPECTED_CAUSE[word], reason
