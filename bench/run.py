"""`make bench`: the benchmark suite. Prints tables and writes bench/out/results.json.

    python -m bench.run                          # everything (long: it builds a 100,000-run
                                                 # warehouse in SQL; docs/performance.md says how long)
    python -m bench.run --only queries,compare   # some sections; the others keep their last results
    python -m bench.run --sizes 100,1000 --repeats 1
    python -m bench.run --only lake --sizes 10000  # 10,000 runs as a DuckLake vs the file: bench/lake.py

Sections: ingest (the GPU archive, --jobs 1 and 2), reingest (the unchanged corpus), trace
(TORCH_TRACE logs only, against tlparse), queries (every canned query), compare (`iwh compare`),
dashboards (every page under AppTest), growth (ingest into warehouses of each size). queries,
compare, dashboards and growth run on warehouses of --sizes runs, built from the corpus in SQL.
What needs ../shared/corpus is skipped with a message when it is absent.
backfill: the GPU archive through Ray tasks and from an S3 prefix, beside local processes (bench/backfill.py).
nightlies: a year of a benchmark suite's nightlies (365 x 180 models x 3 suites x 2 modes of harness rows,
compiles beside a sample): harness queries, the Benchmark suite page, `iwh compare` of two nights
(bench/year.py); it needs no corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import time
from pathlib import Path

import duckdb

from bench import backfill as backfill_bench
from bench import corpus, scale
from bench import year as year_bench
from bench import ingest as ingest_bench
from bench import queries as query_bench
from bench.measure import OUT, ROOT, byte_compile, load_average, run

SECTIONS = ("ingest", "reingest", "trace", "queries", "compare", "dashboards", "growth", "lake", "backfill", "nightlies")
WAREHOUSE_SECTIONS = {"queries", "compare", "dashboards", "growth"}


def machine() -> dict:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    tlparse = ingest_bench._tlparse()
    tl_version = run([tlparse, "--version"]).output.strip() if tlparse else None
    return {"cpus": os.cpu_count(), "cpu": model, "python": platform.python_version(),
            "duckdb": duckdb.__version__, "tlparse": tl_version, "platform": platform.platform()}


def warehouses(sizes: list[int], log) -> dict:
    log("building the base warehouse (GPU + CPU corpora, --jobs 2) and its replicas ...")
    base = scale.build_base()
    out = {"base": base}
    for n in sizes:
        db, info = scale.build(n)
        info["db"] = str(db)
        out[n] = info
        log(f"  {n:>6} runs: {info['rows']:,} rows, {info['file_mb']:.0f} MB, built in {info['build_s']:.1f} s")
    return out


def dashboards(db: str, repeats: int, run_id: str) -> dict:
    p = run([sys.executable, "-m", "bench.dashboards", db, str(repeats), run_id])
    for line in reversed(p.output.splitlines()):
        if line.startswith("{"):
            return {**json.loads(line), "max_rss_mb": p.max_rss_mb}
    return {"error": p.output[-1000:]}


def growth(db: Path) -> dict:
    """The 15 CPU runs ingested again (--force: read, delete their old rows, insert) and the 82
    corpus runs re-ingested unchanged (skipped), into a copy of a warehouse of this size."""
    copy = db.with_name(db.stem + "_growth.duckdb")
    shutil.copyfile(db, copy)
    try:
        cpu = corpus.cpu_runs()
        p = ingest_bench.check(run(ingest_bench.IWH + ["--db", str(copy), "ingest", *map(str, cpu), "--jobs", "2",
                                                       "--force"]), "iwh ingest --force")
        forced = p.wall_s
        p2, info = ingest_bench.ingest([corpus.gpu_runs(), *cpu], copy, 2)
    finally:
        copy.unlink(missing_ok=True)  # as large as the warehouse it copies
    return {"force_ingest_cpu15_s": forced, "reingest_unchanged_s": p2.wall_s, "skipped": info["skipped"]}


def sized_sections(results: dict, only: list[str], n: int, db: str, args, log) -> None:
    """The sections measured on the warehouse of `n` runs, into results[section][str(n)]."""
    key = str(n)
    params = None
    if "queries" in only or "compare" in only or "dashboards" in only:
        with query_bench.Warehouse(db) as wh:
            params = query_bench.choose_params(wh)
    if "queries" in only:
        log(f"queries: {n} runs ...")
        q, _ = query_bench.canned_latencies(db, args.query_repeats)
        results.setdefault("queries", {})[key] = q
    if "compare" in only:
        log(f"compare: {n} runs ...")
        results.setdefault("compare", {})[key] = query_bench.compare_latencies(db, params, args.query_repeats)
    if "dashboards" in only:
        log(f"dashboards: {n} runs ...")
        results.setdefault("dashboards", {})[key] = dashboards(db, args.page_repeats, params["run_id"])
    if "growth" in only:
        log(f"growth: ingest into {n} runs ...")
        results.setdefault("growth", {})[key] = growth(Path(db))


def ingest_sections(results: dict, only: list[str], args, log) -> None:
    """The sections that ingest the corpus: ingest, reingest, trace, backfill."""
    # the ingest targets are the best of 5 (docs/performance.md): this machine is shared
    rounds = args.repeats or 5
    if "ingest" in only:
        log(f"ingest: 67 GPU runs, --jobs 1 and 2, {rounds} times each ...")
        results["ingest"] = ingest_bench.full_ingest(rounds)
    if "reingest" in only:
        log("reingest: the unchanged corpus ...")
        results["reingest"] = ingest_bench.reingest(rounds)
    if "trace" in only:
        log(f"trace: 67 TORCH_TRACE logs, iwh --jobs 2 vs tlparse (HTML and -p), then tlparse's test logs, "
            f"{rounds} rounds ...")
        results["trace"] = ingest_bench.trace_only(rounds)
    if "backfill" in only:
        why = backfill_bench.missing()
        log(f"backfill: skipped, {why}" if why else f"backfill: local, Ray and S3 ingests, {args.repeats or 3} rounds ...")
        if not why:
            results["backfill"] = backfill_bench.backfill(args.repeats or 3, log)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections: {', '.join(SECTIONS)}")
    ap.add_argument("--sizes", default="1000,10000,100000", help="warehouse sizes in runs")
    ap.add_argument("--repeats", type=int, default=None,
                    help="repeats of each ingest measurement (default 5; backfill's rounds, 3)")
    ap.add_argument("--query-repeats", type=int, default=5, help="timed runs of each query (after one warm-up)")
    ap.add_argument("--page-repeats", type=int, default=3, help="renders of each dashboard page")
    ap.add_argument("--days", type=int, default=365, help="nightlies: nights of the year")
    ap.add_argument("--models", type=int, default=180, help="nightlies: models a suite")
    args = ap.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(only) - set(SECTIONS)
    if unknown:
        ap.error(f"unknown sections {', '.join(sorted(unknown))}; choose from {', '.join(SECTIONS)}")
    sizes = [int(s) for s in args.sizes.split(",")]

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    results = json.loads(OUT.read_text()) if OUT.exists() else {}
    results["machine"] = machine()
    results["command"] = "python -m bench.run " + " ".join(argv if argv is not None else sys.argv[1:])
    results["load_average_start"] = load_average()
    t_start = time.perf_counter()
    corpus.WORK.mkdir(parents=True, exist_ok=True)
    byte_compile()
    if "nightlies" in only:  # made here, of the fixtures: no corpus needed
        results["nightlies"] = year_bench.nightlies(args.days, args.models, args.query_repeats, args.page_repeats, log)
    try:
        if set(only) - {"nightlies"}:
            corpus.gpu_runs()
            corpus.cpu_runs()
    except corpus.Missing as e:
        log(f"skipped every other section: {e}. The benchmark needs ../shared/corpus.")
        only = [s for s in only if s == "nightlies"]

    ingest_sections(results, only, args, log)

    if WAREHOUSE_SECTIONS & set(only):
        built = warehouses(sizes, log)
        results["warehouses"] = {str(k): v for k, v in built.items()}
        for n in sizes:
            sized_sections(results, only, n, built[n]["db"], args, log)
    if "lake" in only:
        from bench.lake import lake

        size = 10_000 if 10_000 in sizes else max(sizes)  # a 100,000-run copy takes long
        log(f"lake: {size} runs in a DuckLake vs the file, and ingest by 1, 2 and 4 processes ...")
        results["lake"] = lake(size, args.query_repeats, args.repeats or 3, log)
    results["load_average_end"] = load_average()
    results["bench_seconds"] = time.perf_counter() - t_start
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(results, indent=1, default=str))
    from bench.report import report

    print(report(results, only))
    print(f"\nJSON: {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
