"""The team warehouse against the embedded file, in the same run: every canned query on a
DuckLake (PostgreSQL catalog, Parquet data in a local folder) made by `iwh copy` from the file
warehouse of the largest size, and the 67 GPU runs ingested by 1, 2 and 4 concurrent `iwh ingest`
processes into an empty lake and an empty file. The PostgreSQL server is a throw-away one on
127.0.0.1 (tests/servers.py), stopped at the end."""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench import corpus, scale
from bench.ingest import SUMMARY_RE, _fresh, _summarise
from bench.measure import IWH, Proc, check, run
from bench.queries import bind, canned_latencies, choose_params
from bench.tables import TARGETS, ok, table
from inductor_warehouse.schema import queries as canned
from inductor_warehouse.store.api import Warehouse
from inductor_warehouse.store.opening import connect
from tests.servers import Postgres

PROCESSES = (1, 2, 4)
QUERY_ROUNDS = 2
GPU_RUNS = 67
INGEST_FILE = corpus.WORK / "lake_bench_ingest.duckdb"


def lake(n_runs: int, query_repeats: int, repeats: int, log) -> dict:
    why = Postgres.missing()
    if why:
        return {"skipped": why}
    file_db = _file_warehouse(n_runs, log)
    pg = Postgres().start()
    # the lakes' Parquet files go beside the other warehouses (same disk as the file), not in /tmp
    data = Path(tempfile.mkdtemp(prefix="lake_", dir=corpus.WORK))
    try:
        log(f"  iwh copy {file_db.name} into a DuckLake ...")
        stamp = file_db.stat().st_mtime_ns  # the file is shared: another benchmark may rebuild it meanwhile
        loc = "ducklake:postgres:" + pg.createdb("lake_queries")
        p = check(run(IWH + ["--db", str(file_db), "copy", loc, "--data-path", str(data / "queries")]), "iwh copy")
        with connect(file_db, read_only=True) as con:
            runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
        out = {"runs": runs, "copy": {"wall_s": p.wall_s, "cpu_s": p.cpu_s, "file_mb": file_db.stat().st_size / 1e6,
                                      "parquet_mb": corpus.size_mb([data / "queries"])}}
        log(f"  canned queries on the file and on the lake ({runs} runs), {QUERY_ROUNDS} rounds ...")
        rounds = {"file": [], "lake": []}
        for _ in range(QUERY_ROUNDS):  # alternating, so a busy spell on the shared machine hits both alike
            rounds["file"].append(canned_latencies(str(file_db), query_repeats)[0])
            rounds["lake"].append(canned_latencies(loc, query_repeats)[0])
        # per query, its round least disturbed by other processes: the one of the lower median
        out["queries"] = {kind: {n: min((r[n] for r in rs), key=lambda v: v["median_ms"]) for n in rs[0]}
                          for kind, rs in rounds.items()}
        out["query_rounds"] = QUERY_ROUNDS
        out["file_rebuilt_meanwhile"] = file_db.stat().st_mtime_ns != stamp
        log("  the catalog statements of each canned query on the lake ...")
        out["catalog_statements"] = _catalog_statements(loc)
        shutil.rmtree(data / "queries")
        out["ingest"] = {}
        for procs in PROCESSES:
            log(f"  ingest of the 67 GPU runs by {procs} processes, file and lake, {repeats} times ...")
            tries = {"file": [], "lake": []}
            for r in range(repeats):  # file and lake alternate, so a busy spell hits both alike
                tries["file"].append(_concurrent_ingest(INGEST_FILE, None, procs))
                where = "ducklake:postgres:" + pg.createdb(f"lake_ingest_{procs}_{r}")
                tries["lake"].append(_concurrent_ingest(where, data / f"ingest_{procs}_{r}", procs))
            # the ingest section's figures: MB read over the median wall time, and so on
            out["ingest"][str(procs)] = {kind: _summarise([p for p, _ in t], t[0][1], GPU_RUNS)
                                         for kind, t in tries.items()}
        return out
    finally:
        pg.stop()
        shutil.rmtree(data, ignore_errors=True)
        for p in corpus.WORK.glob(INGEST_FILE.name + "*"):  # with its .wal and lock files
            p.unlink()


def _file_warehouse(n_runs: int, log) -> Path:
    """The file warehouse of this size as the other sections left it, built only when absent:
    rebuilding it would rewrite a file that another benchmark may be reading."""
    db = corpus.WORK / f"wh_{n_runs}.duckdb"
    if db.exists():
        return db
    if not scale.BASE.exists():
        log("  building the base warehouse ...")
        scale.build_base()
    log(f"  building the {n_runs}-run file warehouse ...")
    return scale.build(n_runs)[0]


def _split(runs: list[Path], parts: int) -> list[list[Path]]:
    """Runs dealt to `parts` processes, largest first to the lightest share, so they end together."""
    shares: list[list] = [[0.0, []] for _ in range(parts)]
    for mb, r in sorted(((corpus.size_mb([r]), r) for r in runs), key=lambda x: (-x[0], x[1].name)):
        share = min(shares, key=lambda s: s[0])
        share[0] += mb
        share[1].append(r)
    return [s[1] for s in shares]


def _concurrent_ingest(where: str | Path, data_path: Path | None, procs: int) -> tuple[Proc, float]:
    """One fresh, empty warehouse (made by `iwh migrate`, untimed: not the first writer's creation),
    then `procs` `iwh ingest --jobs 1` processes at once, each on its share of the runs. MB/s is
    the bytes all of them read over the wall time from the first start to the last exit."""
    if data_path is None:
        _fresh(Path(where))
    extra = ["--data-path", str(data_path)] if data_path else []
    check(run(IWH + ["--db", str(where), *extra, "migrate"]), "iwh migrate")
    runs = sorted(p for p in corpus.gpu_runs().iterdir() if p.is_dir())
    cmds = [IWH + ["--db", str(where), "ingest", *map(str, share), "--jobs", "1"] for share in _split(runs, procs)]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(procs) as pool:
        done = list(pool.map(run, cmds))
    wall = time.perf_counter() - t0
    mb = ingested = 0
    for p in done:
        m = SUMMARY_RE.search(check(p, "iwh ingest").output)
        ingested += int(m.group(1))
        mb += float(m.group(3))
    with connect(where, read_only=True) as con:  # concurrent writers must land each run once
        stored = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    if ingested != GPU_RUNS or stored != GPU_RUNS:
        raise RuntimeError(f"{procs} processes ingested {ingested} runs and {where} holds {stored}; expected {GPU_RUNS}")
    if data_path:
        shutil.rmtree(data_path)
    # the processes as one command: their CPU seconds summed, the largest of their resident sets
    return Proc(wall, sum(p.cpu_s for p in done), max(p.max_rss_mb for p in done), 0, ""), mb


_MARK = "-- iwh bench query "


def _catalog_statements(loc: str) -> dict:
    """What bounds the lake's queries: the PostgreSQL statements DuckLake sends for each canned
    query, {query: {statement kind: n}}, one warm run each. The postgres extension prints them
    (pg_debug_show_queries) on the output of a process of its own, between this module's marks."""
    out = check(run([sys.executable, "-m", "bench.lake", "statements", loc]), "counting catalog statements").output
    counts = {}
    for name, body in re.findall(rf"^{_MARK}(\S+)\n(.*?)^{_MARK}end$", out, re.S | re.M):
        kinds = Counter()
        for statement in filter(str.strip, re.split(r"\n\s*\n", body)):
            found = re.search(r"\bducklake_\w+", statement)
            kinds[found.group(0) if found else statement.split()[0]] += 1
        counts[name] = dict(kinds)
    return counts


def _print_statements(loc: str) -> None:
    with Warehouse(loc) as wh:
        params = choose_params(wh)
    con = connect(loc, read_only=True)  # not locked down: the debug setting is a setting
    try:
        for q in canned.all_queries():
            given = bind(q, params)
            canned.run(con, q.name, given).fetchall()  # warm: the lake's schema is read once per connection
            con.execute("SET pg_debug_show_queries = true")
            print(f"{_MARK}{q.name}", file=sys.stderr, flush=True)  # the extension writes there too
            canned.run(con, q.name, given).fetchall()
            con.execute("SET pg_debug_show_queries = false")
            print(f"{_MARK}end", file=sys.stderr, flush=True)
    finally:
        con.close()


def _lake_queries(lake: dict) -> dict:
    """Per warehouse: the median and the slowest of the canned queries' medians; per query, lake / file."""
    q = lake["queries"]
    out = {}
    for kind in ("file", "lake"):
        ms = sorted((v["median_ms"], n) for n, v in q[kind].items())
        out[kind] = {"median": ms[len(ms) // 2][0], "slowest": ms[-1][0], "slowest_name": ms[-1][1],
                     "over": sum(1 for m, _ in ms if m >= TARGETS["query_ms"])}
    out["ratios"] = sorted((q["lake"][n]["median_ms"] / q["file"][n]["median_ms"], n) for n in q["file"])
    return out


def report(lake: dict) -> str:
    """The section's tables for bench/report.py."""
    if "skipped" in lake:
        return f"\nDuckLake vs file: skipped ({lake['skipped']})"
    s, c = _lake_queries(lake), lake["copy"]
    f, k, ratios = s["file"], s["lake"], s["ratios"]
    over = sum(1 for r, _ in ratios if r > 2)
    worst = ", ".join(f"{n} {r:.1f}x" for r, n in ratios[::-1][:5])
    rows = [["file", f["median"], f["slowest"], f["slowest_name"], f["over"]],
            ["DuckLake", k["median"], k["slowest"], k["slowest_name"], k["over"]],
            ["lake / file", k["median"] / f["median"], k["slowest"] / f["slowest"], "", ""]]
    n = next(iter(lake["queries"]["file"].values()))["n"]
    text = (f"\nDuckLake (PostgreSQL catalog, Parquet in a local folder) vs the file, {lake['runs']:,} runs, same run: "
            f"the lake made by `iwh copy` in {c['wall_s']:.0f} s ({c['file_mb']:,.0f} MB file, {c['parquet_mb']:,.0f} MB "
            f"of Parquet); per query, the lower of {lake.get('query_rounds', 1)} alternating rounds' medians of {n} runs "
            f"after a warm-up" + (" (WARNING: another process rebuilt the file during the section)"
                                  if lake.get("file_rebuilt_meanwhile") else "") + "\n"
            + table(["warehouse", "median query ms", "slowest query ms", "slowest query", "queries >= 200 ms"], rows)
            + f"\nPer query, lake / file: median {ratios[len(ratios) // 2][0]:.2f}x; {over} of {len(ratios)} over 2x; "
            f"worst {worst}" + _statements_report(lake, f["median"], k["median"]))
    rows = []
    for procs, r in lake["ingest"].items():
        fi, la = r["file"], r["lake"]
        rows.append([int(procs), fi["mb"], fi["wall_s"], fi["mb_per_s"], la["wall_s"], la["mb_per_s"],
                     la["mb_per_s"] / fi["mb_per_s"], fi["cpu_s"], la["cpu_s"], max(fi["max_rss_mb"], la["max_rss_mb"])])
    text += ("\n\nConcurrent ingest of the 67 GPU runs into an empty warehouse: N `iwh ingest --jobs 1` processes, the "
             "runs split among them (a file's writers wait for each other's commits; a lake's for its advisory lock); "
             "MB/s = MB read / wall time from first start to last exit, median of repeats\n"
             + table(["processes", "MB", "file wall s", "file MB/s", "lake wall s", "lake MB/s", "lake / file",
                       "file CPU s", "lake CPU s", "peak RSS MB"], rows))
    return text


def _statements_report(lake: dict, file_ms: float, lake_ms: float) -> str:
    counts = lake.get("catalog_statements")
    if not counts:
        return ""
    per_query = sorted((sum(k.values()), n) for n, k in counts.items())
    kinds = Counter()
    for k in counts.values():
        kinds.update(k)
    median = per_query[len(per_query) // 2][0]
    return (f"\nWhat bounds the lake: DuckLake sends PostgreSQL {sum(kinds.values())} statements for the "
            f"{len(counts)} canned queries (one warm run each, pg_debug_show_queries), a median of {median} a "
            f"query, most {per_query[-1][0]} ({per_query[-1][1]}): "
            + ", ".join(f"{k} {n}" for k, n in kinds.most_common())
            + f". The lake's median is {lake_ms - file_ms:.1f} ms above the file's, "
            f"{(lake_ms - file_ms) / max(median, 1):.1f} ms per statement of the median query.")


def targets(lake: dict) -> list[list]:
    if "skipped" in lake:
        return []
    s = _lake_queries(lake)
    med, slow = s["lake"]["median"] / s["file"]["median"], s["lake"]["slowest"] / s["file"]["slowest"]
    return [[f"DuckLake queries within 2x of the file at {lake['runs']:,} runs",
             f"median {med:.2f}x, slowest {slow:.2f}x", ok(med <= 2 and slow <= 2)]]


if __name__ == "__main__":
    if sys.argv[1:2] == ["statements"]:
        _print_statements(sys.argv[2])
