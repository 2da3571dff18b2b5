"""The `nightlies` section of `make bench`: a year of a benchmark suite's nightlies on one node.

bench/nightlies.py writes the year (365 nights x 3 suites x 2 modes x CI's performance and accuracy
CSVs of 180 models: 788,400 harness rows in 4,380 files, and 39 compiles of the harness's captures
beside a sample of nights); `iwh ingest --jobs 2` reads it into a warehouse of its own; then:
- every harness canned query (and the queries the Benchmark suite page and Trends' suite view run),
  median of --query-repeats after a warm-up, with the parameters a page gives them;
- the Benchmark suite page rendered under AppTest (bench/dashboards.py), opened by its URL, with an
  empty query cache: as first opened, and with a night's point picked (its models);
- `iwh compare` of two nights, harness results alone, as a CI gate runs it.
"""

from __future__ import annotations

import json
import shutil
import sys
import time

from bench import corpus
from bench.measure import IWH, check, median, run, timed
from bench.nightlies import FIRST, REGRESSED, unpack_captures, write_year
from inductor_warehouse.schema import queries as canned
from inductor_warehouse.store.api import Warehouse

HERE = corpus.WORK / "nightlies"
DB = HERE / "year.duckdb"
SUITE = "huggingface"


def night(days: int, back: int = 0) -> str:
    """The night the bench looks at, `back` nights before it: the first of one suite's regression
    (bench/nightlies.py), or the year's last night when the year is shorter."""
    from datetime import timedelta

    return (FIRST + timedelta(days=min(REGRESSED[1], days - 1) - back)).isoformat()


def params(days: int) -> dict[str, dict]:
    """Each harness query as a page or a gate asks it: one suite, a night, a model."""
    tonight, last_night = night(days), night(days, 1)
    return {
        "harness/summary": {"key": "nightly"},
        "harness/point_models": {"key": "nightly", "point": tonight, "suite": SUITE, "mode": "training",
                                 "dtype": "amp", "device": "cuda"},
        "harness/models": {"key": "nightly", "suite": SUITE, "model": "huggingface_model_017"},
        "harness/model_changes": {"key": "nightly", "model": "huggingface_model_017"},
        "harness/hud_regression": {"key": "nightly", "base": ",".join(night(days, b) for b in range(2, 8)),
                                   "head": ",".join(night(days, b) for b in range(2))},
        "harness/graph_break_gate": {"key": "nightly", "head": tonight, "base": last_night, "suite": SUITE},
        "harness/compile_phases": {"model": "mobilenetv2_100"},
        "dashboard/suite_trend": {"axis": "compiler"},
    }


def build(days: int, models: int, log) -> dict:
    shutil.rmtree(HERE, ignore_errors=True)
    HERE.mkdir(parents=True)
    t0 = time.perf_counter()
    made = write_year(HERE / "year", days, models, unpack_captures(HERE))
    made["write_s"] = time.perf_counter() - t0
    log(f"  {made['csvs']:,} CSVs, {made['rows']:,} rows, {made['compiles']} compiles; ingesting ...")
    p = check(run(IWH + ["--db", str(DB), "ingest", str(HERE / "year"), "--jobs", "2"]), "iwh ingest of the year")
    made |= {"ingest_s": p.wall_s, "ingest_cpu_s": p.cpu_s, "ingest_rss_mb": p.max_rss_mb,
             "file_mb": DB.stat().st_size / 1e6}
    return made


def queries(days: int, repeats: int) -> dict:
    out = {}
    with Warehouse(str(DB)) as wh:
        for name, given in params(days).items():
            res = timed(lambda name=name, given=given: canned.run(wh.con, name, given).fetchall(), repeats)
            res["rows"] = len(canned.run(wh.con, name, given).fetchall())
            res["params"] = given
            out[name] = res
    return out


def pages(days: int, repeats: int) -> dict:
    """The Benchmark suite page, as opened and with a point picked (bench/dashboards.py, a process)."""
    out = {}
    tonight = night(days)
    for what, url in (("suite page", {"suite": SUITE, "mode": "train", "dtype": "amp"}),
                      ("suite page, a night's models", {"suite": SUITE, "mode": "train", "dtype": "amp",
                                                        "at": tonight, "line": "inductor_with_cudagraphs"})):
        p = run([sys.executable, "-m", "bench.dashboards", str(DB), str(repeats), "-", "suite", json.dumps(url)])
        line = next((x for x in reversed(p.output.splitlines()) if x.startswith("{")), None)
        out[what] = {**json.loads(line)["suite"], "max_rss_mb": p.max_rss_mb} if line else {"error": p.output[-1000:]}
    return out


def gate(days: int, repeats: int) -> dict:
    tonight, last_night = night(days), night(days, 1)
    walls, rc = [], None
    for _ in range(max(3, repeats)):
        t0 = time.perf_counter()
        p = run(IWH + ["--db", str(DB), "compare", "--base", f"nightly={last_night}", "--head", f"nightly={tonight}",
                       "--fail-on", "regression", "--format", "json"])
        walls.append((time.perf_counter() - t0) * 1000)
        rc = p.rc
    return {"base": last_night, "head": tonight, "command_ms": median(walls), "exit_status": rc}


def nightlies(days: int, models: int, query_repeats: int, page_repeats: int, log) -> dict:
    log(f"nightlies: {days} nights x 3 suites x 2 modes x {models} models ...")
    out = {"built": build(days, models, log)}
    out["queries"] = queries(days, query_repeats)
    out["pages"] = pages(days, page_repeats)
    out["compare"] = gate(days, query_repeats)
    return out


def report(res: dict) -> str:
    from bench.tables import table

    b = res["built"]
    rows = [[n, v["median_ms"], v["rows"]] for n, v in sorted(res["queries"].items(), key=lambda kv: -kv[1]["median_ms"])]
    pages_ = [[w, v.get("median_ms"), ", ".join(v.get("exceptions") or []) or "none"] for w, v in res["pages"].items()]
    return (f"\nA year of nightlies ({b['nights']} nights, {b['csvs']:,} harness CSVs, {b['rows']:,} rows, "
            f"{b['compiles']} compiles; {b['file_mb']:.0f} MB): ingest --jobs 2 {b['ingest_s']:.0f} s, "
            f"peak RSS {b['ingest_rss_mb']:.0f} MB\n"
            + table(["harness query", "median ms", "rows"], rows) + "\n"
            + table(["page (AppTest, empty query cache)", "median ms", "exceptions"], pages_) + "\n"
            + f"iwh compare of two nights ({res['compare'].get('base')} -> {res['compare'].get('head')}, harness results "
              f"alone, --fail-on regression): {res['compare']['command_ms']:.0f} ms, exit status "
              f"{res['compare']['exit_status']}")


def targets(res: dict) -> list[list]:
    from bench.tables import TARGETS, ok

    qs = res["queries"]
    worst = max(v["median_ms"] for v in qs.values())
    slow = sorted(n for n, v in qs.items() if v["median_ms"] >= TARGETS["query_ms_100k"])
    page = max(v.get("median_ms") or float("inf") for v in res["pages"].values())
    return [[f"harness queries < {TARGETS['query_ms_100k']:.0f} ms on a year of nightlies", f"slowest {worst:.0f} ms"
             + (f" ({', '.join(slow)})" if slow else ""), ok(not slow)],
            ["Benchmark suite page < 1 s on a year of nightlies", f"{page:.0f} ms", ok(page < TARGETS["page_ms_100k"])]]
