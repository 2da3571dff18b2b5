"""Cache-aware runs, on real captures: CPU (torch 2.13 and 2.14.1) and GPU (torch 2.11, H100) runs
compiled cold then warm with one Inductor cache folder each, a warm run whose AOTAutograd cache was
off (FX graph cache hits that leave empty graph folders), and tlparse's cache_hit_miss.log.

Expected values are counted from the logs here with plain string matching: cache artifacts by name
and envelope, kernel definitions in the output code payloads.
"""

from __future__ import annotations

import gzip
import re
import tarfile
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from inductor_warehouse.analysis import regress
from inductor_warehouse.analysis.compare import compare
from inductor_warehouse.cli.main import cli
from inductor_warehouse.ingest.load import ingest_paths
from tests.conftest import FIXTURES, reader, unpack_gpu_captures

CPU_CAPTURES = FIXTURES / "captures" / "cpu-torch2.13-2.14.1-caches.tar.xz"
CACHE_HIT_MISS = FIXTURES / "torch_trace" / "tlparse" / "cache_hit_miss.log.gz"
ARTIFACT = re.compile(r'\{"artifact": \{"name": "(fx_graph|aotautograd)_cache_(hit|miss|bypass)".*?"frame_id": (\d+), '
                      r'"frame_compile_id": (\d+), "attempt": (\d+)')
KERNEL_DEF = re.compile(r"^\t(\w+) = async_compile\.(?:triton|cpp_pybinding|cpp)\(", re.M)


@pytest.fixture(scope="module")
def captures(tmp_path_factory) -> tuple[str, Path]:
    root = tmp_path_factory.mktemp("caches")
    with tarfile.open(CPU_CAPTURES) as tf:
        tf.extractall(root / "cpu", filter="data")
    unpack_gpu_captures(root)
    db = str(root / "wh.duckdb")
    summary = ingest_paths([root / "cpu", root / "gpu-captures", CACHE_HIT_MISS], db)
    assert summary.errors == 0, summary.error_rows[:3]
    return db, root


def runs_under(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("manifest.json"))


def log_text(path: Path) -> str:
    return gzip.open(path, "rt").read() if path.suffix == ".gz" else path.read_text()


def counted(log: str) -> Counter:
    """(compile id, cache, outcome) of every cache artifact, from the record headers alone."""
    out = Counter()
    for m in ARTIFACT.finditer(log):
        cid = f"{m.group(3)}/{m.group(4)}" + (f"_{m.group(5)}" if m.group(5) != "0" else "")
        out[(cid, "fx_graph" if m.group(1) == "fx_graph" else "aot_autograd", m.group(2))] += 1
    return out


def test_cache_outcomes_per_compile_equal_the_log_records(captures):
    db, root = captures
    logs = {str(p): log_text(p) for r in runs_under(root) for p in r.glob("trace/*.log")}
    logs[str(CACHE_HIT_MISS)] = log_text(CACHE_HIT_MISS)
    assert len(logs) == 33 + 12 + 1
    with reader(db) as con:
        got = Counter()
        rows = con.execute("""
            SELECT coalesce(a.path, r.source_path), e.compile_id, e.cache, e.outcome FROM cache_events e
            JOIN runs r USING (run_id) LEFT JOIN artifacts a ON a.run_id = e.run_id AND a.kind = 'torch_trace'
            WHERE e.cache IN ('fx_graph', 'aot_autograd')""").fetchall()
        bases = dict(con.execute("SELECT run_id, source_path FROM runs").fetchall())
    by_log = {}
    for path, cid, cache, outcome in rows:
        full = path if path in logs else next(p for p in logs if p.endswith(path))
        by_log.setdefault(full, Counter())[(cid, cache, outcome)] += 1
        got[outcome] += 1
    for path, text in logs.items():
        assert by_log.get(path, Counter()) == counted(text), path
    assert got["hit"] > 0 and got["miss"] > 0 and got["bypass"] == 3 and bases
    # cache_hit_miss.log, counted by hand (research notes): 1/0 has fx miss 2, fx hit 1, AOT bypass 3
    assert counted(logs[str(CACHE_HIT_MISS)]) == {("1/0", "fx_graph", "miss"): 2, ("1/0", "fx_graph", "hit"): 1,
                                                  ("1/0", "aot_autograd", "bypass"): 3}


SAVED = re.compile(r'\{"artifact": \{"name": "(fx_graph|aotautograd)_cache_hit".*?"frame_id": (\d+), '
                   r'"frame_compile_id": (\d+)(?:, "attempt": (\d+))?.*\n\t(\{.*\})')


def saved_s(log: str) -> float | None:
    """Seconds a log's cache hits saved, read from the hit records' payloads: per compile the
    AOTAutograd hit's `time_saved_ms` where there is one (its entry holds the Inductor graph),
    else the FX graph hits' `time_saved_ns`: the caches nest, so a compile never saves their sum."""
    import json

    per: dict[str, dict[str, float]] = {}
    for m in SAVED.finditer(log):
        payload = json.loads(m.group(5))
        cid = f"{m.group(2)}/{m.group(3)}" + (f"_{m.group(4)}" if m.group(4) not in (None, "0") else "")
        us = (payload["time_saved_ms"] * 1e3 if m.group(1) == "aotautograd" and "time_saved_ms" in payload
              else payload.get("time_saved_ns", 0) / 1e3 if m.group(1) == "fx_graph" else None)
        if us is not None:
            per.setdefault(cid, {}).setdefault(m.group(1), 0.0)
            per[cid][m.group(1)] += us
    if not per:
        return None
    return sum(c.get("aotautograd", c.get("fx_graph", 0.0)) for c in per.values()) / 1e6


def test_time_saved_is_each_compiles_outermost_hit(captures):
    db, root = captures
    runs = runs_under(root / "cpu")
    checked = 0
    with reader(db) as con:
        for run in runs:
            [log] = run.glob("trace/*.log")
            expected = saved_s(log.read_text())
            got = con.execute("SELECT u.time_saved_s FROM run_rollups u JOIN runs r USING (run_id) "
                              "WHERE r.source_path = ?", [str(run)]).fetchone()
            if expected is None:
                continue
            assert got is not None and got[0] == pytest.approx(expected, rel=1e-9), run
            checked += 1
    assert checked >= 4  # the warm runs: each of them hit both caches


def test_a_warm_run_has_the_cold_runs_kernels_and_unknown_fusion_counts(captures):
    db, root = captures
    with reader(db) as con:
        rows = con.execute("""
            SELECT r.source_path, r.labels ->> 'cache', g.graph_id, g.source, g.cache_state, g.kernel_count,
                   g.pre_fusion_nodes, g.post_fusion_nodes, g.unknown_because
            FROM graphs g JOIN runs r USING (run_id) WHERE r.labels ->> 'cache' IN ('cold', 'warm')""").fetchall()
        kernel_states = dict(con.execute("""
            SELECT k.cache_state, count(*) FROM kernels k JOIN runs r USING (run_id)
            WHERE r.labels ->> 'cache' = 'warm' GROUP BY ALL""").fetchall())
    by_run = {}
    for path, temp, graph, source, state, kernels, pre, post, why in rows:
        by_run.setdefault(path, {})[graph] = (temp, source, state, kernels, pre, post, why)
    warm_runs = [p for p, g in by_run.items() if next(iter(g.values()))[0] == "warm"]
    assert len(warm_runs) == 16 + 6
    for warm in warm_runs:
        cold = warm.replace("/warm/", "/cold/")
        log = log_text(next(Path(warm).glob("trace/*.log")))
        defined = len(KERNEL_DEF.findall(log))
        assert sum(g[3] for g in by_run[warm].values()) == defined == sum(g[3] for g in by_run[cold].values())
        for graph, (_, source, state, _kernels, pre, post, why) in by_run[warm].items():
            # loaded from the cache: kernels from the cached output code; nothing scheduled, nothing fused
            assert (source, state, pre, post) == ("torch_trace", "hit", None, None), (warm, graph)
            assert why.startswith("FX graph cache hit")
        assert all(g[2] == "miss" and g[4] is not None for g in by_run[cold].values())
    assert set(kernel_states) == {"hit"}


def test_an_fx_cache_hit_leaves_an_empty_graph_folder_that_is_no_error(captures):
    """The AOTAutograd cache off, the FX graph cache warm: Inductor opens each graph's debug folder
    and writes nothing in it (what the issue saw ingested as 'process killed' errors)."""
    db, root = captures
    run = next(root.glob("cpu/*/warm-fx-only/mlp__train__fp32__default"))
    empty = [d for d in run.rglob("torchinductor/*") if d.is_dir() and not any(d.iterdir())]
    assert len(empty) == 2
    summary = ingest_paths([run], str(root / "fx-only.duckdb"))
    assert summary.errors == 0 and summary.counters["empty_graph_folder_of_a_cache_hit"] == 2
    with reader(str(root / "fx-only.duckdb")) as con:
        assert con.execute("SELECT count(*), sum(kernel_count) FROM graphs WHERE cache_state = 'hit'").fetchone() == (
            2, len(KERNEL_DEF.findall(log_text(next(run.glob("trace/*.log"))))))
        assert con.execute("SELECT count(*) FROM cache_events WHERE cache = 'aot_autograd'").fetchone()[0] == 0


def test_hit_rates_and_warm_against_cold_compile_time(captures):
    db, _ = captures
    res = CliRunner().invoke(cli, ["query", "cache/hit_rate_by_model_version", "--db", db, "--format", "json",
                                   "-p", "model=transformer"])
    import json

    rows = {(r["compiler_version"], r["workload"]): r for r in json.loads(res.output) if "device=cpu" in r["workload"]}
    # each CPU release: one cold and one warm run of each workload (infer, train): half the lookups hit
    assert len(rows) == 4 and {w for _, w in rows} == {
        "transformer [batch=8 device=cpu dtype=fp32 mode=infer variant=default]",
        "transformer [batch=8 device=cpu dtype=fp32 mode=train variant=default]"}
    for r in rows.values():
        assert (r["runs_cold"], r["runs_warm"], r["fx_hit_rate"], r["aot_hit_rate"]) == (1, 1, 0.5, 0.5)
    res = CliRunner().invoke(cli, ["query", "cache/warm_vs_cold_compile_time", "--db", db, "--format", "json"])
    out = json.loads(res.output)
    for r in out:
        if r["warm_runs"]:
            assert r["warm_compile_s"] < r["cold_compile_s"] and 0 < r["saved_share"] < 1
    # a run whose only hits are on the entry it wrote itself (tlparse's cache_hit_miss.log: a miss of
    # key ff6i..., Dynamo reset, a hit of the same key) is cold, with no warm run beside it
    assert [(r["model"], r["cold_runs"], r["warm_compile_s"]) for r in out if not r["warm_runs"]] == [
        ("cache_hit_miss", 1, None)]
    # each side's time is the least of its runs (min of N, as every compile time), read here with plain SQL
    with reader(db) as con:
        runs = con.execute("""SELECT w.workload, w.compiler_version, c.cache_temperature, t.total_s
                              FROM run_workloads w JOIN run_cache c USING (run_id) JOIN run_compile_time t USING (run_id)
                              WHERE c.cache_temperature IN ('cold', 'warm') AND t.total_s IS NOT NULL""").fetchall()
    sides: dict = {}
    for workload, version, temperature, total in runs:
        sides.setdefault((workload, version, temperature), []).append(total)
    rows = json.loads(res.output)
    assert any(len(sides.get((r["workload"], r["compiler_version"], "warm"), ())) > 1 for r in rows)
    for r in rows:
        for temperature in ("cold", "warm"):
            times = sides.get((r["workload"], r["compiler_version"], temperature))
            assert r[f"{temperature}_compile_s"] == (round(min(times), 3) if times else None)


def test_compare_reports_hit_rates_and_will_not_gate_cold_against_warm(captures):
    db, _ = captures
    with reader(db) as con:
        result = compare(con, "cache=cold,compiler=2.13", "cache=warm,compiler=2.13")
    assert result.pairs
    for p in result.pairs:
        assert (p.metrics["fx_cache_hit_rate"].base, p.metrics["fx_cache_hit_rate"].head) == (0.0, 1.0)
        assert p.metrics["compile_s"].verdict == regress.NOT_COMPARABLE
    assert any("compile time is not gated" in w for w in result.warnings)
    # the gate does not fire on a cache warm-up, even with --fail-on regression
    res = CliRunner().invoke(cli, ["compare", "--base", "cache=cold", "--head", "cache=warm", "--fail-on", "regression",
                                   "--db", db])
    assert res.exit_code == 0, res.output


def test_compare_pools_a_sides_hit_rate_as_the_cache_query_does(captures):
    """A side of several runs (2.13: cold, warm, warm with the AOTAutograd cache off; 2.14.1: cold and
    warm) hits the share of its runs' FX cache lookups that hit, pooled, in `iwh compare` as in
    cache/hit_rate_by_model_version: never the median of per-run rates (of 0 and 1: 0, -100 pp)."""
    db, root = captures
    want: dict[str, tuple[int, int]] = {}
    for run in runs_under(root / "cpu"):
        if run.name != "mlp__train__fp32__default":
            continue
        seen = Counter()
        for log in (run / "trace").iterdir():
            seen.update(outcome for (_, cache, outcome), n in counted(log_text(log)).items()
                        if cache == "fx_graph" for _ in range(n))
        release = "2.13" if "2.13" in run.parent.parent.name else "2.14.1"
        hits, lookups = want.get(release, (0, 0))
        want[release] = (hits + seen["hit"], lookups + sum(seen.values()))
    assert sorted(want) == ["2.13", "2.14.1"] and all(h < n for h, n in want.values())
    with reader(db) as con:
        result = compare(con, "compiler=2.13,model=mlp,mode=train,device=cpu",
                         "compiler=2.14.1,model=mlp,mode=train,device=cpu")
    [pair] = result.pairs
    assert (len(pair.base_runs), len(pair.head_runs)) == (3, 2)
    rate = pair.metrics["fx_cache_hit_rate"]
    assert (rate.base, rate.head) == (want["2.13"][0] / want["2.13"][1], want["2.14.1"][0] / want["2.14.1"][1])
    res = CliRunner().invoke(cli, ["query", "cache/hit_rate_by_model_version", "--db", db, "--format", "json",
                                   "-p", "model=mlp"])
    import json

    rows = {r["compiler_version"][:4]: r["fx_hit_rate"] for r in json.loads(res.output)
            if r["workload"].startswith("mlp [") and "mode=train" in r["workload"] and "device=cpu" in r["workload"]}
    assert rows == {"2.13": round(rate.base, 3), "2.14": round(rate.head, 3)}
