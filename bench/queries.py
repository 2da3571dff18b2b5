"""Latency of every canned query, of `iwh compare` and of the dashboard pages on one warehouse.

Parameters are chosen from the data here, never in the query files: a run of the most common
model in a release, not a replicated nightly (its first run id, present at every size), that
run's largest graph and one of its kernels.
Optional filters (models, compilers, devices, labels, search) stay unset: each query then reads
the whole warehouse, its slowest case."""

from __future__ import annotations

import time

from bench.measure import IWH, median, run, timed
from inductor_warehouse.analysis.compare import compare
from inductor_warehouse.analysis.kernel_diff import kernel_diff
from inductor_warehouse.schema import queries as canned
from inductor_warehouse.store.api import Warehouse


def choose_params(wh: Warehouse) -> dict:
    con = wh.con
    model, compiler = con.execute("""
        SELECT model, compiler_version FROM runs WHERE device = 'cuda'
        GROUP BY model, compiler_version ORDER BY compiler_version LIKE '%.dev%', count(*) DESC, model LIMIT 1""").fetchone()
    run_id = con.execute("""
        SELECT run_id FROM runs WHERE model = ? AND compiler_version = ?
        ORDER BY labels->>'variant' = 'default' DESC, run_id LIMIT 1""", [model, compiler]).fetchone()[0]
    graph_id = con.execute("""
        SELECT graph_id FROM kernels WHERE run_id = ? GROUP BY graph_id ORDER BY count(*) DESC, graph_id LIMIT 1""",
                           [run_id]).fetchone()[0]
    source_hash = con.execute("""
        SELECT source_hash FROM kernels WHERE run_id = ? AND graph_id = ? AND source_hash IS NOT NULL
        ORDER BY kernel_name LIMIT 1""", [run_id, graph_id]).fetchone()[0]
    head = con.execute("""
        SELECT compiler_version FROM runs WHERE compiler_version LIKE ? || '.dev%'
        ORDER BY compiler_version LIMIT 1""", [compiler.split("+")[0]]).fetchone()
    return {"model": model, "compiler": compiler, "run_id": run_id, "graph_id": graph_id,
            "source_hash": source_hash, "head_compiler": head[0] if head else None}


def bind(q: canned.Query, p: dict) -> dict:
    """Values for the parameters a query needs to say anything; optional filters stay unset."""
    given = {}
    for param in q.params:
        name = param.name
        if name in ("run", "run_id"):
            given[name] = p["run_id"]
        elif name == "graph_id":
            given[name] = p["graph_id"]
        elif name in ("hash", "source_hash"):
            given[name] = p["source_hash"]
        elif name == "compiler" and q.area == "compare":
            given[name] = p["compiler"]
    return given


def canned_latencies(db: str, repeats: int) -> tuple[dict, dict]:
    with Warehouse(db) as wh:
        params = choose_params(wh)
        out = {}
        for q in canned.all_queries():
            given = bind(q, params)
            res = timed(lambda name=q.name, given=given: canned.run(wh.con, name, given).fetchall(), repeats)
            res["params"] = given
            res["rows"] = len(canned.run(wh.con, q.name, given).fetchall())
            out[q.name] = res
    return out, params


def compare_latencies(db: str, params: dict, repeats: int) -> dict:
    """`iwh compare` between the corpus' release and its first replicated nightly: the summary of
    every model, and the kernel-level diff of one model; in process and as the command."""
    if not params.get("head_compiler"):
        return {"skipped": "no replicated nightly in this warehouse"}
    base, head = f"compiler={params['compiler']}", f"compiler={params['head_compiler']}"
    out = {"base": base, "head": head, "model": params["model"]}
    with Warehouse(db) as wh:
        out["compare"] = timed(lambda: compare(wh.con, base, head), repeats)
        out["kernel_diff"] = timed(lambda: kernel_diff(wh.con, base, head, params["model"]), repeats)
        out["pairs"] = len(compare(wh.con, base, head).pairs)
    for what, extra in (("command_ms", []), ("command_kernels_ms", ["--model", params["model"], "--kernels"])):
        walls = []
        for _ in range(3):
            t0 = time.perf_counter()
            p = run(IWH + ["--db", db, "compare", "--base", base, "--head", head, *extra])
            walls.append((time.perf_counter() - t0) * 1000)
            out["max_rss_mb"] = max(out.get("max_rss_mb", 0), p.max_rss_mb)
            if p.rc != 0:
                out[f"{what}_error"] = p.output[-500:]
                break
        out[what] = median(walls)
    return out
