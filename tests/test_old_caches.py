"""Caches-on runs of older releases (2.3.1, 2.4.1, 2.5.1, 2.7.1, 2.13 on CPU), each a cold run on an
empty cache then a warm run on the same cache, read as what each release logs of a cache hit.

The runs are real captures of the old-caches hunt (tests/fixtures/SOURCES.md), with the hunter's
in-process counters beside each (`<run>.truth.json`: counters["inductor"], compile_times(),
torch._inductor.metrics), which the assertions compare with, together with counts made here from the
files themselves."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import unpack, FIXTURES, reader

ARCHIVE = FIXTURES / "old_caches" / "cpu-torch2.3-2.13-old-caches.tar.xz"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    return unpack(ARCHIVE, tmp_path_factory.mktemp("old_caches"))


def _ingest(tmp_path: Path, *runs: Path):
    db = str(tmp_path / "wh.duckdb")
    summary = ingest_paths(list(runs), db)
    return summary, reader(db)


def _truth(run: Path) -> dict:
    return json.loads(run.with_name(run.name + ".truth.json").read_text())


def _graph_folders(run: Path) -> list[Path]:
    return sorted(d for d in run.rglob("torchinductor/model_*") if d.is_dir())


def _rows(con, sql: str, run: Path) -> list[tuple]:
    return con.execute(sql.replace("$run", "(SELECT run_id FROM runs WHERE source_path = ?)"), [str(run)]).fetchall()


def test_a_2_3_warm_run_is_cache_hits_not_a_killed_process(runs, tmp_path):
    """2.3 logs no cache record and no code for a loaded graph: a warm run's graph folders are empty.
    They are the graphs of compiles that finished (their guards logged), not a killed process; and
    the run ran where its guarded tensors were, so it pairs with its cold twin."""
    cold, warm = runs / "2.3.1" / "gbreak_dyn-cold", runs / "2.3.1" / "gbreak_dyn-warm"
    summary, con = _ingest(tmp_path, cold, warm)
    assert summary.errors == 0
    folders = _graph_folders(warm)
    assert all(not any(d.iterdir()) for d in folders)
    hits = _truth(warm)["counters"]["inductor"]["fxgraph_cache_hit"]
    assert len(folders) == hits == _truth(warm)["counters"]["stats"]["unique_graphs"] == 7
    graphs = _rows(con, "SELECT folder, cache_state, kernel_count, compile_id FROM graphs WHERE run_id = $run", warm)
    assert sorted(f for f, *_ in graphs) == [d.name for d in folders]
    assert {(s, k) for _, s, k, _ in graphs} == {("hit", None)}  # loaded: its kernels are not in the files
    assert all(c is not None for *_, c in graphs)
    guards = (next(warm.rglob("trace/*.log"))).read_text()
    assert "DispatchKeySet(CPU," in guards and "DispatchKeySet(CUDA" not in guards
    (cold_device, cold_workload), = _rows(con, "SELECT r.device, m.workload FROM run_metrics m JOIN runs r "
                                             "USING (run_id) WHERE run_id = $run", cold)
    (warm_device, warm_workload, kernels), = _rows(con, "SELECT r.device, m.workload, m.kernel_count FROM run_metrics m "
                                                        "JOIN runs r USING (run_id) WHERE run_id = $run", warm)
    assert (warm_device, warm_workload) == (cold_device, cold_workload) == ("cpu", "gbreak_dyn [device=cpu]")
    assert kernels is None  # unknown, never 0
    # the cold run's one hit (compile 2/2 reloading what 2/1 wrote) is its one empty folder
    empty = [d.name for d in _graph_folders(cold) if not any(d.iterdir())]
    assert len(empty) == _truth(cold)["counters"]["inductor"]["fxgraph_cache_hit"] == 1
    assert _rows(con, "SELECT folder FROM graphs WHERE run_id = $run AND cache_state = 'hit'", cold) == [(empty[0],)]
    assert _rows(con, "SELECT count(*) FROM graphs WHERE run_id = $run", cold) == [(len(_graph_folders(cold)),)]


def test_a_2_3_run_killed_in_a_compile_still_says_so(runs, tmp_path):
    """The same warm run cut after the guards of its first compiles: the empty folders of compiles
    the trace began and never guarded are still a killed process's."""
    run = tmp_path / "killed"
    src = runs / "2.3.1" / "gbreak_dyn-warm"
    import shutil
    shutil.copytree(src, run)
    log = next(run.rglob("trace/*.log"))
    text = log.read_text()
    guards = [m.start() for m in re.finditer(r"^V\S+ \S+ \d+ \S+\] \{\"dynamo_guards\"", text, re.M)]
    assert len(guards) == 7
    log.write_text(text[:guards[3]])  # the fourth compile's guards and all after it never written
    summary, con = _ingest(tmp_path, run)
    errors = con.execute("SELECT message FROM ingest_errors").fetchall()
    assert summary.errors == len(errors) == 7 - 3 and all("killed" in m for m, in errors)


def _records(log: Path, name: str) -> list[tuple[int, str]]:
    """(offset, compile id) of each record of the log whose metadata names `name`, read here by hand."""
    out = []
    for m in re.finditer(r"^\S+ \S+ \d+ \S+\] (\{.*\})$", log.read_text(), re.M):
        meta = json.loads(m.group(1))
        if name in meta or meta.get("artifact", {}).get("name") == name:
            attempt = meta.get("attempt", 0)
            out.append((m.start(), f"{meta['frame_id']}/{meta['frame_compile_id']}" + (f"_{attempt}" if attempt else "")))
    return out


def test_a_2_4_hash_only_lookup_is_settled_by_what_follows_it(runs, tmp_path):
    """2.4 logs each FX graph lookup as `fx_graph_cache_hash` before the lookup, with no outcome, and
    logs output code only when it compiled: code after the key is a miss, the compile going on
    without code a hit. The cold run's outcomes are its counters' (6 misses, the one hit being 2/2
    reloading 2/1's key), the warm run's all hits; its kernels are unknown, never 0."""
    cold, warm = runs / "2.4.1" / "gbreak_dyn-cold", runs / "2.4.1" / "gbreak_dyn-warm"
    summary, con = _ingest(tmp_path, cold, warm)
    assert summary.errors == 0
    for run in (cold, warm):
        log = next(run.rglob("trace/*.log"))
        lookups, codes = _records(log, "fx_graph_cache_hash"), _records(log, "inductor_output_code")
        coded = {cid for _, cid in codes}
        assert all("cache_state" not in line for line in log.read_text().splitlines() if "fx_graph_cache_hash" in line)
        counters = _truth(run)["counters"]["inductor"]
        expect = sorted((cid, "miss" if cid in coded else "hit") for _, cid in lookups)
        got = _rows(con, "SELECT compile_id, outcome FROM cache_events WHERE run_id = $run AND cache = 'fx_graph'", run)
        assert sorted(got) == expect
        assert sum(o == "hit" for _, o in got) == counters.get("fxgraph_cache_hit", 0)
        assert sum(o == "miss" for _, o in got) == counters.get("fxgraph_cache_miss", 0)
    assert _rows(con, "SELECT fx_hit_rate, cache_temperature FROM run_cache WHERE run_id = $run", warm) == [(1.0, "warm")]
    assert _rows(con, "SELECT kernel_count, extern_kernel_count FROM run_metrics WHERE run_id = $run", warm) == [(None, None)]


def test_a_lookup_nothing_settles_is_unknown(runs, tmp_path):
    """The warm 2.4 log cut right after its last key: that lookup's outcome is unknown, and so are the
    run's hit rate and temperature (never a measured 0% and cold)."""
    run = tmp_path / "cut"
    import shutil
    shutil.copytree(runs / "2.4.1" / "gbreak_dyn-warm", run)
    for d in _graph_folders(run):
        d.rmdir()  # the debug tree's empty folders would say nothing more
    log = next(run.rglob("trace/*.log"))
    text = log.read_text()
    last = _records(log, "fx_graph_cache_hash")[-1][0]
    log.write_text(text[:text.index("\n", text.index("\n", last) + 1) + 1])  # the record and its payload line
    _, con = _ingest(tmp_path, run)
    outcomes = _rows(con, "SELECT outcome FROM cache_events WHERE run_id = $run ORDER BY line", run)
    assert outcomes == [("hit",)] * 6 + [(None,)]
    assert _rows(con, "SELECT fx_hits, fx_lookups, fx_hit_rate, cache_temperature FROM run_cache WHERE run_id = $run",
                 run) == [(6, 7, None, None)]


def test_a_graph_loaded_from_another_graphs_entry_keeps_its_own_id_and_folder(runs, tmp_path):
    """2.5: compile 2/2 (a float-guard recompile) has 2/1's FX key, so its hit replays 2/1's code, whose
    `# AOT ID:` names 2/1's graph; Dynamo gave it a graph of its own, whose debug folder is empty. The
    graph keeps that folder's id and folder, and nobody blames a killed process."""
    cons = {}
    for name in ("gbreak_dyn-cold", "gbreak_dyn-warm"):
        run = runs / "2.5.1" / name
        (tmp_path / name).mkdir()
        summary, con = cons[name] = _ingest(tmp_path / name, run)
        assert summary.errors == 0
        folders = _graph_folders(run)
        own = sorted(re.match(r"model__(\d+)_(inference|forward|backward)_", d.name).expand(r"\1_\2") for d in folders)
        got = _rows(con, "SELECT graph_id, folder FROM graphs WHERE run_id = $run ORDER BY graph_id", run)
        assert [g for g, _ in got] == own and len(own) == _truth(run)["counters"]["stats"]["unique_graphs"]
        assert sorted(f for _, f in got) == [d.name for d in folders]
    cold = runs / "2.5.1" / "gbreak_dyn-cold"
    log = next(cold.rglob("trace/*.log")).read_text()
    keys = {cid: json.loads(payload)["key"] for cid, payload in re.findall(
        r'"fx_graph_cache_\w+".*?"frame_id": (\d+, "frame_compile_id": \d+).*\n\t(\{.*\})', log)}
    assert keys["2, \"frame_compile_id\": 2"] == keys["2, \"frame_compile_id\": 1"]
    empty = [d.name for d in _graph_folders(cold) if not any(d.iterdir())]
    assert _rows(cons["gbreak_dyn-cold"][1], "SELECT folder, compile_id, cache_state FROM graphs "
                 "WHERE run_id = $run AND folder = '" + empty[0] + "'", cold) == [(empty[0], "2/2", "hit")]


def test_a_first_run_that_meets_a_graph_twice_is_cold(runs, tmp_path):
    """The cold runs' one hit is on the entry the same run wrote at an earlier miss of the same key
    (the counters' one hit of 2.4.1 and 2.5.1): the run compiled every distinct graph, so it is cold;
    its hit rate stays what the cache did. The warm runs stay warm."""
    paths = [runs / v / f"gbreak_dyn-{t}" for v in ("2.4.1", "2.5.1") for t in ("cold", "warm")]
    summary, con = _ingest(tmp_path, *paths)
    assert summary.errors == 0
    for run in paths:
        log = next(run.rglob("trace/*.log")).read_text()
        keys = [json.loads(p)["key"] for p in re.findall(r'"fx_graph_cache_\w+".*\n\t(\{.*\})', log)]
        counters = _truth(run)["counters"]["inductor"]
        hits, lookups = counters.get("fxgraph_cache_hit", 0), len(keys)
        assert lookups == hits + counters.get("fxgraph_cache_miss", 0)
        repeated = len(keys) - len(set(keys))
        cold = run.name.endswith("cold")
        assert (hits, repeated) == ((1, 1) if cold else (7, 1))
        expect = [(hits, lookups, hits / lookups, "cold" if cold else "warm")]
        assert _rows(con, "SELECT fx_hits, fx_lookups, fx_hit_rate, cache_temperature FROM run_cache "
                          "WHERE run_id = $run", run) == expect


def _metrics(run: Path) -> list[dict]:
    log = next(run.rglob("trace/*.log")).read_text()
    return [json.loads(m) for m in re.findall(r'\] (\{"compilation_metrics": .*\})$', log, re.M)]


@pytest.mark.parametrize("release, name, aot, inductor, code_gen", [
    # the timers each record carries: the outer one ran, the inner ones are null (a hit skipped them)
    ("2.7.1", "cnn_train-warm", "aot_autograd_cumulative_compile_time_us", None, None),
    ("2.13", "gbreak_dyn-warm", "aot_autograd_cumulative_compile_time_us", None, None),
    ("2.5.1", "gbreak_dyn-warm", "backend_compile_time_s", "inductor_compile_time_s", None),
])
def test_a_warm_runs_phases_are_the_timers_its_release_reported(runs, tmp_path, release, name, aot, inductor, code_gen):
    """A warm run's compile phases: AOTAutograd's time where a cache hit skipped Inductor, Inductor's
    where the FX graph cache skipped code gen, and 0 for what was skipped, so the parts add up to
    the total; never NULL where the release reported the timers."""
    run = runs / release / name
    records = [m["compilation_metrics"] for m in _metrics(run)]
    assert records and all(r.get("fail_type") is None for r in records)
    scale = 1e-6 if aot.endswith("_us") else 1.0
    inner = [k for k in ("inductor_cumulative_compile_time_us", "inductor_code_gen_cumulative_compile_time_us",
                         "code_gen_time_s") if k in records[0]]
    assert all(r[k] is None for r in records for k in inner if k != inductor)
    aot_total = sum(r[aot] for r in records) * scale
    inductor_total = sum(r[inductor] for r in records) * scale if inductor else 0.0
    _, con = _ingest(tmp_path, run)
    (total, dynamo, aot_s, inductor_s, code_gen_s), = _rows(
        con, "SELECT total_s, dynamo_s, aot_s, inductor_s, code_gen_s FROM run_compile_time WHERE run_id = $run", run)
    assert aot_s == pytest.approx(aot_total - inductor_total, abs=1e-6)
    assert inductor_s == pytest.approx(inductor_total, abs=1e-6) and code_gen_s == 0
    assert dynamo + aot_s + inductor_s + code_gen_s == pytest.approx(total, abs=1e-6)


def test_a_run_with_a_hit_graph_of_unknown_code_has_an_unknown_kernel_count(runs, tmp_path):
    """A 2.3 or 2.4 graph loaded from the FX graph cache logged no code: its kernels are unknown, so the
    run's count is unknown, never the sum of its other graphs' (6 where Inductor generated 7, a false
    6 -> 7 kernel regression against 2.5.1, which logs a hit's code); 2.5.1's count is whole."""
    paths = [runs / v / "gbreak_dyn-cold" for v in ("2.3.1", "2.4.1", "2.5.1")]
    summary, con = _ingest(tmp_path, *paths)
    got = {}
    for run in paths:
        hits = _truth(run)["counters"]["inductor"].get("fxgraph_cache_hit", 0)
        log = next(run.rglob("trace/*.log")).read_text()
        logged_code = log.count('"inductor_output_code"')
        graphs = _truth(run)["counters"]["stats"]["unique_graphs"]
        (kernels,) = _rows(con, "SELECT kernel_count FROM run_metrics WHERE run_id = $run", run)[0]
        got[run.parent.name] = (hits, logged_code < graphs, kernels)
    generated = _truth(paths[-1])["inductor_metrics"]["generated_kernel_count"]
    assert got == {"2.3.1": (1, True, None), "2.4.1": (1, True, None), "2.5.1": (1, False, generated)}


def test_a_2_3_warm_run_reads_warm_and_its_unknowns_are_no_zeros(runs, tmp_path):
    """2.3 logs no cache record: the lookups are unknown, never 0, and nothing says caches were off
    (the manifest says on), so the temperature is what the graphs' hits say: warm for the warm run,
    unknown for the cold one (one own hit, the rest unread). Its kernel count is unknown, and the
    ingest summary says so instead of printing 0 kernels."""
    warm, cold = runs / "2.3.1" / "gbreak_dyn-warm", runs / "2.3.1" / "gbreak_dyn-cold"
    assert json.loads((warm / "manifest.json").read_text())["caches"] == "on"
    summary, con = _ingest(tmp_path, warm)
    assert "kernels unknown" in summary.line() and "0 kernels" not in summary.line()
    assert _rows(con, "SELECT fx_lookups, cache_temperature FROM run_cache WHERE run_id = $run", warm) == [(None, "warm")]
    (tmp_path / "cold").mkdir()
    _, con = _ingest(tmp_path / "cold", cold)
    assert _rows(con, "SELECT fx_lookups, cache_temperature FROM run_cache WHERE run_id = $run", cold) == [(None, None)]
