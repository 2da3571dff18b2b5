"""The compile modes production uses, on real captures of `zoo/scenarios.py`: GPU (2x H100, torch
2.11, Triton 3.6: reduce-overhead, AOTInductor, export, flex attention, a compiled optimizer,
graph breaks, 2-rank NCCL DDP, and the zoo's dyn_graphbreak and transformer training runs) and CPU
(torch 2.13.0 and 2.14.1: the same, with 2-rank gloo DDP). tests/fixtures/SOURCES.md says how each
was made.

Expected values are read here from the files with plain string matching, never through the
warehouse's parsers: kernel definitions and extern call lines of the output code, graph folders,
Dynamo's own counters (ground_truth.json), the trace's artifact payloads.
"""

from __future__ import annotations

import json
import re
import shutil
import tarfile
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader

CAPTURES = FIXTURES / "captures"
ARCHIVES = [CAPTURES / "gpu-torch2.11-modes.tar.xz", CAPTURES / "cpu-torch2.13-2.14.1-modes.tar.xz"]

# independent readings of output code: a generated kernel is defined at the line start, an extern
# call is an indented statement (of call(), a partition, a device guard in them) calling
# extern_kernels or a torch.ops op other than Inductor's memory helpers
PY_KERNEL = re.compile(r"^\w+ = async_compile\.(?:triton|cpp_pybinding|cpp)\(", re.M)
PY_EXTERN = re.compile(r"^ {4,}(?:\w+(?:, \w+)* = )?(?:extern_kernels\.\w+|torch\.ops\.(?!inductor\.)\w+\.[\w.]+)\(", re.M)
CPP_TRITON = re.compile(r"async_compile\.triton\('(\w+)'")
CPP_KERNEL = re.compile(r'^extern "C"\s+void\s+(\w+)\([^)]*\)\s*\{', re.M)
CPP_SHIM = re.compile(r"\baoti_torch_(?:cpu|cuda)_\w+\(")
COLLECTIVE_LINE = re.compile(r"^ +torch\.ops\._c10d_functional\.\w+\.default\(", re.M)


@pytest.fixture(scope="module")
def modes(tmp_path_factory):
    root = tmp_path_factory.mktemp("modes")
    for archive in ARCHIVES:
        with tarfile.open(archive) as tf:
            tf.extractall(root, filter="data")
    db = str(root / "wh.duckdb")
    summary = ingest_paths([root], db)
    return root, db, summary


def _runs(root: Path) -> list[Path]:
    return sorted(m.parent for m in root.rglob("manifest.json"))


def _code_counts(path: Path) -> tuple[int, int]:
    text = path.read_text()
    if path.suffix == ".cpp":
        run_impl = text.split("AOTInductorModel::run_impl(", 1)[1].split("\n}", 1)[0]
        return len(set(CPP_TRITON.findall(text)) | set(CPP_KERNEL.findall(text))), len(CPP_SHIM.findall(run_impl))
    return len(PY_KERNEL.findall(text)), len(PY_EXTERN.findall(text))


def test_every_graph_counts_its_kernels_and_extern_calls(modes):
    root, db, _ = modes
    con = reader(db)
    checked = Counter()
    for run in _runs(root):
        for code in sorted(run.rglob("torchinductor/*/output_code.*")):
            rows = con.execute(
                "SELECT g.kernel_count, g.extern_kernel_count, g.partitions FROM graphs g JOIN runs r USING (run_id) "
                "WHERE g.folder = ? AND (r.source_path = ? OR starts_with(r.source_path, ?)) "
                "AND EXISTS (SELECT 1 FROM artifacts a WHERE a.run_id = g.run_id AND ends_with(?, a.path))",
                [code.parent.name, str(run), str(run) + "/", str(code)]).fetchall()
            assert len(rows) == 1, code
            kernels, externs, partitions = rows[0]
            assert (kernels, externs) == _code_counts(code), code
            if code.suffix == ".py":
                assert partitions == len(re.findall(r"^def partition_\d+\(", code.read_text(), re.M)), code
            checked[(run.parent.name, run.name)] += 1
    # the modes the issue names are among them, on both devices
    for device in ("modes", "cpu-2.13", "cpu-2.14.1"):
        for scenario in ("reduce_overhead", "aoti", "graph_breaks"):
            assert checked[(device, scenario)] >= 1, (device, scenario)


def test_cudagraph_partitions_hold_the_extern_calls(modes):
    """The 4-layer transformer under reduce-overhead on the H100: one partition holding its 16 mm/addmm
    calls and 4 attention calls (read as 0 extern calls before partitions were read)."""
    root, db, _ = modes
    code = next((root / "modes" / "reduce_overhead").rglob("model__0_inference_0.0/output_code.py")).read_text()
    body = code.split("def partition_0(args):", 1)[1].split("\nclass Runner", 1)[0]
    mm = len(re.findall(r"^ +extern_kernels\.(?:mm|addmm)\(", body, re.M))
    attention = len(re.findall(r"= torch\.ops\.aten\._scaled_dot_product_\w+\.default\(", body))
    [(externs, partitions)] = reader(db).execute(
        "SELECT extern_kernel_count, partitions FROM graphs g JOIN runs r USING (run_id) "
        "WHERE r.model = 'reduce_overhead' AND r.device = 'cuda' AND g.folder = 'model__0_inference_0.0'").fetchall()
    assert (externs, partitions) == (mm + attention, 1) and (mm, attention) == (16, 4)


def test_cudagraph_skips_and_recordings_are_rows(modes):
    root, db, _ = modes
    logs = (root / "modes" / "reduce_overhead" / "torch_logs.txt").read_text()
    skips = re.findall(r"\[__cudagraphs\] skipping cudagraphs due to (.*?)\. Found from", logs)
    trace = next((root / "modes" / "reduce_overhead" / "trace").glob("*.log")).read_text()
    records = trace.count('"name": "CUDAGraphNode.record"') // 2  # a span is a begin and an end
    con = reader(db)
    got = con.execute("SELECT kind, reason, n FROM cudagraph_events JOIN runs r USING (run_id) "
                      "WHERE r.model = 'reduce_overhead' AND r.device = 'cuda' ORDER BY ALL").fetchall()
    assert [r for k, r, _ in got if k == "skip"] == skips == ["mutated inputs (1 instances)"]
    assert sum(n for k, _, n in got if k == "record") == records == 2
    # CPU runs of the same scenario have no cudagraphs at all
    assert con.execute("SELECT count(*) FROM cudagraph_events JOIN runs r USING (run_id) WHERE r.device = 'cpu'"
                       ).fetchone()[0] == 0
    # the canned query: one row per run, named by its workload
    rows = json.loads(CliRunner().invoke(cli, ["--db", db, "query", "compile/cudagraph_skips", "--format", "json"]).output)
    workload = con.execute("SELECT workload FROM run_workloads WHERE model = 'reduce_overhead' AND device = 'cuda'"
                           ).fetchone()[0]
    assert [(r["workload"], r["recordings"], r["skips"], r["skip_reasons"]) for r in rows] == [
        (workload, records, len(skips), skips[0])]


def test_graphs_equal_dynamo_unique_graphs_and_kernel_less_graphs_are_rows(modes):
    root, db, _ = modes
    con = reader(db)
    for run in _runs(root):
        truth = json.loads((run / "ground_truth.json").read_text()) if (run / "ground_truth.json").exists() else None
        if truth is None or run.name in ("ddp", "aoti", "export"):
            continue
        unique = truth["dynamo_counters"]["stats"]["unique_graphs"]
        [(compiles,)] = con.execute(
            "SELECT count(DISTINCT g.compile_id) FROM graphs g JOIN runs r USING (run_id) WHERE r.source_path = ?",
            [str(run)]).fetchall()
        assert compiles == unique, run
    for run in (p for p in _runs(root) if p.name == "graph_breaks"):
        empty_code = sum(1 for c in run.rglob("output_code.py") if not PY_KERNEL.search(c.read_text()))
        [(rows,)] = con.execute("SELECT count(*) FROM graphs g JOIN runs r USING (run_id) "
                                "WHERE r.source_path = ? AND g.kernel_count = 0", [str(run)]).fetchall()
        assert rows == empty_code == 3, run


def test_healthy_runs_have_no_error_rows(modes):
    _, db, summary = modes
    assert summary.errors == 0, summary.error_rows[:3]
    assert reader(db).execute("SELECT count(*) FROM ingest_errors").fetchone()[0] == 0


def test_aoti_runs_are_graphs_with_kernels_and_lineage(modes):
    root, db, _ = modes
    con = reader(db)
    rows = con.execute("SELECT r.source_path, g.kernel_count, g.extern_kernel_count, "
                       "(SELECT count(*) FROM lineage l WHERE l.run_id = g.run_id AND l.source = 'kernel_information') "
                       "FROM graphs g JOIN runs r USING (run_id) WHERE r.model = 'aoti' ORDER BY 1").fetchall()
    assert len(rows) == 3  # GPU, CPU 2.13, CPU 2.14.1
    for source, kernels, externs, info_lineage in rows:
        assert kernels >= 1 and externs >= 1
        package = list(Path(source).rglob("kernel_information.json"))
        # the GPU run segfaulted loading the package (exit 139): no kernel_information.json
        assert (info_lineage > 0) == bool(package), source
        if package:
            keys = json.loads(package[0].read_text())
            assert {k.rpartition(":")[0] for k in keys} == {
                k for (k,) in con.execute("SELECT DISTINCT kernel_name FROM lineage l JOIN runs r USING (run_id) "
                                          "WHERE r.source_path = ? AND l.source = 'kernel_information'", [source]).fetchall()}


def test_export_only_logs_are_runs_with_a_graph_and_guards(modes):
    root, db, _ = modes
    con = reader(db)
    for run in (p for p in _runs(root) if p.name == "export"):
        trace = next((run / "trace").glob("*.log")).read_text()
        program = trace.split('{"exported_program"', 1)[1].split("\n", 1)[1]
        lines = [line[1:] for line in program.split("\n") if line.startswith("\t")]
        graph = lines[:next(i for i, line in enumerate(lines) if line.startswith("Graph signature"))]
        nodes = sum(bool(re.match(r"^ {12}\w+(: \"[^\"]*\")? = ", g)) for g in graph)
        inputs = len(re.findall(r'(\w+): "[^"]*"', graph[2]))
        guards = trace.count('{"guard_added"')
        [(graphs, kernels, ops, shape_guards)] = con.execute(
            "SELECT count(*), max(kernel_count), (SELECT count(*) FROM ops o WHERE o.run_id = r.run_id), "
            "(SELECT count(*) FROM shape_events s WHERE s.run_id = r.run_id AND s.kind = 'guard') "
            "FROM runs r JOIN graphs g USING (run_id) WHERE r.source_path = ? GROUP BY r.run_id", [str(run)]).fetchall()
        assert (graphs, kernels) == (1, None)
        assert ops == inputs + nodes + 1  # placeholders, nodes, the return
        assert shape_guards >= guards >= 1


def test_a_ddp_job_is_one_job_of_both_ranks(modes):
    root, db, summary = modes
    con = reader(db)
    assert summary.runs == con.execute("SELECT count(*) FROM runs").fetchone()[0]
    assert summary.graphs == con.execute("SELECT count(*) FROM graphs").fetchone()[0]
    for job in (p for p in _runs(root) if p.name == "ddp"):
        logs = sorted((job / "trace").glob("*rank_*"))
        ranks = con.execute("SELECT rank, job, labels ->> 'job', run_id FROM runs WHERE job = ? ORDER BY rank",
                            [str(job)]).fetchall()
        assert [r[0] for r in ranks] == [0, 1] == [int(re.search(r"rank_(\d+)", p.name).group(1)) for p in logs]
        assert {r[2] for r in ranks} == {"ddp"}
        for rank, _, _, run_id in ranks:
            log = next(p for p in logs if f"rank_{rank}_" in p.name)
            pid = re.match(r"^\S+ \S+ (\d+) ", log.read_text()).group(1)
            debug = next(job.glob(f"torch_compile_debug/run_*-pid_{pid}"))
            folders = list(debug.glob("torchinductor/model__*"))
            assert con.execute("SELECT count(*) FROM graphs WHERE run_id = ?", [run_id]).fetchone()[0] == len(folders)
            code_collectives = sum(len(COLLECTIVE_LINE.findall(f.joinpath("output_code.py").read_text())) for f in folders)
            assert con.execute("SELECT count(*) FROM collectives WHERE run_id = ? AND source = 'output_code'",
                               [run_id]).fetchone()[0] == code_collectives == 2
            schedules = [json.loads(p) for p in _payloads(log.read_text(), "inductor_collective_schedule")]
            assert con.execute("SELECT count(*) FROM collectives WHERE run_id = ? AND source = 'collective_schedule'",
                               [run_id]).fetchone()[0] == sum(map(len, schedules)) >= 2
            estimates = [json.loads(p)["ops"] for p in _payloads(log.read_text(), "inductor_runtime_and_tensor_meta")]
            executions = [json.loads(p)["graph_execution_order"] for p in _payloads(log.read_text(), "graph_execution")]
            assert con.execute("SELECT count(*) FROM op_estimates WHERE run_id = ?", [run_id]).fetchone()[0] == \
                sum(map(len, estimates))
            assert con.execute("SELECT count(*) FROM graph_executions WHERE run_id = ?", [run_id]).fetchone()[0] == \
                sum(map(len, executions))
    # the CPU jobs logged runtime estimates and the execution order; ranks of each job agree
    assert con.execute("SELECT count(*) FROM op_estimates").fetchone()[0] > 0
    assert con.execute("SELECT count(*) FROM graph_executions").fetchone()[0] > 0
    assert con.execute("SELECT count(*) FROM rank_divergences").fetchone()[0] == 0


def test_each_rank_of_a_job_is_a_workload_and_pairs_with_the_same_rank(modes):
    """Ranks of a job are runs of their own that may compile differently: rank is part of the
    workload (views/12_workloads.sql), so compare and changes set rank 1 against rank 1, never a
    median of the job's ranks; the job's name is not part of it, so two releases' jobs pair."""
    from inductor_warehouse.analysis.changes import changes
    from inductor_warehouse.analysis.compare import compare

    root, db, _ = modes
    con = reader(db)
    jobs = [p for p in _runs(root) if p.name == "ddp"]
    ranks = {(str(job), int(re.search(r"rank_(\d+)", p.name).group(1))) for job in jobs
             for p in (job / "trace").glob("*rank_*")}
    rows = con.execute("SELECT r.job, w.rank, w.workload FROM run_workloads w JOIN runs r USING (run_id) "
                       "WHERE w.model = 'ddp'").fetchall()
    assert {(j, r) for j, r, _ in rows} == ranks and len(ranks) == 2 * len(jobs) == 6
    assert all(w.startswith("ddp [") and f" rank={r} " in w for _, r, w in rows)
    assert len({w for _, _, w in rows}) == 4  # (cpu, cuda) x (rank 0, rank 1)
    result = compare(con, "compiler=2.13", "compiler=2.14.1", model="ddp")
    assert sorted(p.config.get("rank") for p in result.pairs) == ["0", "1"]
    rank_of = dict(con.execute("SELECT run_id, rank FROM runs WHERE model = 'ddp'").fetchall())
    for p in result.pairs:
        assert len(p.base_runs) == len(p.head_runs) == 1
        assert rank_of[p.base_runs[0]] == rank_of[p.head_runs[0]] == int(p.config["rank"])
    report = changes(con, "ddp")
    assert sorted(len(runs) for runs in report.series.values()) == [1, 1, 2, 2]  # cuda 2.11; cpu 2.13 -> 2.14.1
    for runs in report.series.values():
        assert len({r["rank"] for r in runs}) == 1


def _payloads(log: str, artifact: str) -> list[str]:
    out = []
    for part in log.split(f'{{"artifact": {{"name": "{artifact}"')[1:]:
        lines = part.split("\n")[1:]
        out.append("\n".join(line[1:] for line in lines[:next(i for i, x in enumerate(lines) if not x.startswith("\t"))]))
    return out


def test_ranks_that_diverge_are_rows(tmp_path):
    """A job whose rank 1 compiled a function rank 0 did not: the ranks' own logs, one of them cut
    to end before that compile (what a rank that took another branch leaves)."""
    with tarfile.open(ARCHIVES[1]) as tf:
        tf.extractall(tmp_path, filter="data")
    job = tmp_path / "cpu-2.13" / "ddp"
    log0 = next((job / "trace").glob("*rank_0_*"))
    text = log0.read_text()
    # the records of the last frame rank 0 compiled (the functional all_reduce) are taken out
    last = max(int(f) for f in re.findall(r'"frame_id": (\d+)', text))
    records = re.split(r"\n(?=[VIWEC]\d{4} )", text)
    # the graph folders of that frame's compiles go too: the output code names their AOT ids
    aot_ids = {m.group(1) for rec in records if f'"frame_id": {last},' in rec and '{"inductor_output_code"' in rec
               for m in [re.search(r"# AOT ID: \['(\d+_\w+?)'\]", rec)] if m}
    log0.write_text("\n".join(rec for rec in records if f'"frame_id": {last},' not in rec) + "\n")
    pid = re.match(r"^\S+ \S+ (\d+) ", text).group(1)
    for aot in aot_ids:
        number, phase = aot.split("_", 1)
        for folder in job.glob(f"torch_compile_debug/run_*-pid_{pid}/torchinductor/model__{number}_{phase}_*"):
            shutil.rmtree(folder)
    db = str(tmp_path / "wh.duckdb")
    ingest_paths([job], db)
    rows = reader(db).execute("SELECT kind, key, rank, value FROM rank_divergences WHERE kind = 'compile_ids' "
                              "ORDER BY ALL").fetchall()
    assert rows == [("compile_ids", f"{last}/0", 0, None), ("compile_ids", f"{last}/0", 1, "compiled")]
    # the canned query sets the ranks side by side, each its own workload
    out = json.loads(CliRunner().invoke(cli, ["--db", db, "query", "multirank/divergences", "-p", "kind=compile_ids",
                                                  "--format", "json"]).output)
    assert [(r["key"], r["rank"], r["value"], r["agreeing"], r["workload"].split(" rank=")[1][0]) for r in out] == [
        (f"{last}/0", 0, "(none)", "1/2", "0"), (f"{last}/0", 1, "compiled", "1/2", "1")]
    assert aot_ids  # the frame was an Inductor compile, whose folder went with it


def test_a_run_replaced_in_the_same_ingest_is_counted_once(tmp_path):
    with tarfile.open(ARCHIVES[1]) as tf:
        tf.extractall(tmp_path, filter="data")
    run = tmp_path / "cpu-2.13" / "export"
    shutil.copytree(run, tmp_path / "copy" / "export")  # the same files elsewhere: the same run id
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([run, tmp_path / "copy"], db)
    assert (s.runs, s.replaced) == (1, 1)
    assert reader(db).execute("SELECT count(*) FROM runs").fetchone()[0] == 1


def test_an_empty_folder_of_a_graph_whose_code_the_trace_has_is_no_error(tmp_path):
    """A kernel-less graph's folder emptied (as Inductor leaves it when it writes no file): the trace's
    output code gives the graph, 0 kernels, no error."""
    with tarfile.open(ARCHIVES[1]) as tf:
        tf.extractall(tmp_path, filter="data")
    run = tmp_path / "cpu-2.14.1" / "graph_breaks"
    folder = next(c.parent for c in run.rglob("output_code.py") if not PY_KERNEL.search(c.read_text()))
    for f in folder.iterdir():
        f.unlink()
    db = str(tmp_path / "wh.duckdb")
    s = ingest_paths([run], db)
    assert s.errors == 0 and s.counters["empty_graph_folder_with_code_in_trace"] == 1
    aot = re.match(r"model__(\d+)_(\w+?)_\d+\.\d+$", folder.name)
    assert reader(db).execute("SELECT kernel_count, source FROM graphs WHERE graph_id = ?",
                              [f"{aot.group(1)}_{aot.group(2)}"]).fetchall() == [(0, "torch_trace")]
