"""bench/out/results.json -> the tables `make bench` prints (and docs/performance.md's)."""

from __future__ import annotations

from bench.measure import OUT
from bench.tables import TARGETS, ok, table


def report(res: dict, only=None) -> str:
    out = []
    m = res.get("machine", {})
    out.append(f"Machine: {m.get('cpus')} CPUs ({m.get('cpu')}), Python {m.get('python')}, DuckDB {m.get('duckdb')}, "
               f"{m.get('tlparse') or 'tlparse absent'}; load average {res.get('load_average_start', 0):.1f} at "
               f"start, {res.get('load_average_end', 0):.1f} at end (other processes share the machine).")
    if "ingest" in res:
        rows = []
        for jobs, r in res["ingest"].items():
            rows.append([f"full GPU ingest, --{jobs.replace('jobs', 'jobs ')}", r["runs"], r["mb"], r["wall_s"],
                         r["runs_per_s"], r["mb_per_s"], r.get("best_mb_per_s"), r["cpu_s"], r["mb_per_cpu_s"],
                         r["max_rss_mb"]])
        out.append("\nIngest (median of repeats, and the best; MB = bytes read; CPU = user+sys of all its processes)\n"
                   + table(["what", "runs", "MB", "wall s", "runs/s", "MB/s", "best MB/s", "CPU s", "MB per CPU s",
                            "peak RSS MB"], rows))
    if "reingest" in res:
        r = res["reingest"]
        out.append(f"\nRe-ingest of the unchanged corpus ({r['runs_skipped']} runs skipped): {r['wall_s']:.2f} s "
                   f"median, whole command (runs {r['walls_s']}), peak RSS {r['max_rss_mb']:.0f} MB")
    if "trace" in res:
        out.append(_trace(res["trace"]))
    if "warehouses" in res:
        out.append(_growth(res))
    if "queries" in res:
        sizes = list(res["queries"])
        names = sorted({n for s in sizes for n in res["queries"][s]})
        rows = [[n] + [res["queries"][s].get(n, {}).get("median_ms") for s in sizes]
                + [res["queries"][sizes[-1]].get(n, {}).get("rows")] for n in names]
        rows.sort(key=lambda r: -(r[len(sizes)] or 0))
        out.append(f"\nCanned queries, median ms of {next(iter(res['queries'][sizes[-1]].values()))['n']} runs after a "
                   f"warm-up (optional filters unset: whole warehouse)\n"
                   + table(["query"] + [f"{s} runs" for s in sizes] + [f"rows at {sizes[-1]}"], rows))
    if "dashboards" in res:
        sizes = list(res["dashboards"])
        pages = list(res["dashboards"][sizes[0]])
        rows = [[p] + [res["dashboards"][s].get(p, {}).get("median_ms") for s in sizes]
                + [", ".join(res["dashboards"][sizes[-1]].get(p, {}).get("exceptions") or []) or "none"]
                for p in pages if p not in ("error", "max_rss_mb", "provenance_graph")]
        out.append("\nDashboard pages under AppTest, median ms of a render opened by its URL, empty query cache\n"
                   + table(["page"] + [f"{s} runs" for s in sizes] + ["exceptions"], rows))
        graph = res["dashboards"][sizes[-1]].get("provenance_graph")
        if graph:
            out.append(f"provenance: the Run explorer's viewer on graph {graph['graph']} of run {graph['run']} "
                       f"(the GPU corpus's largest with provenance), kernel {graph['kernel']} chosen")
    if "lake" in res:
        from bench.lake import report as lake_report

        out.append(lake_report(res["lake"]))
    if "backfill" in res:
        out.append(_backfill(res["backfill"]))
    if "nightlies" in res:
        from bench.year import report as year_report

        out.append(year_report(res["nightlies"]))
    out.append("\nTargets\n" + table(["target", "measured", ""], _targets(res)))
    return "\n".join(out)


def _trace(t: dict) -> str:
    rows = [["iwh ingest --jobs 2", t["iwh_wall_s"], t["iwh_cpu_s"], t["mb"] / t["iwh_wall_s"], ""]]
    if "parse_only_wall_s" in t:
        ratio = f"{t['parse_only_x_vs_plain']:.2f}x as fast as tlparse -p" if "parse_only_x_vs_plain" in t else ""
        rows.append(["its parse alone: --jobs 2, no warehouse", t["parse_only_wall_s"], t["parse_only_cpu_s"],
                     t["mb"] / t["parse_only_wall_s"], ratio])
    if "tlparse_html_wall_s" in t:
        rows.append(["tlparse (HTML), one call per log", t["tlparse_html_wall_s"], t["tlparse_html_cpu_s"],
                     t["mb"] / t["tlparse_html_wall_s"], f"iwh {t['x_vs_html']:.1f}x faster"])
        rows.append(["tlparse -p (plain), one call per log", t["tlparse_plain_wall_s"], t["tlparse_plain_cpu_s"],
                     t["mb"] / t["tlparse_plain_wall_s"], f"iwh {t['x_vs_plain']:.2f}x as fast"])
    out = (f"\nTORCH_TRACE only: {t['logs']} logs, {t['mb']:.0f} MB (median of rounds; ratios per round)\n"
           + table(["tool", "wall s", "CPU s", "MB/s", "ratio"], rows))
    if "x_vs_plain_best" in t:
        out += (f"\nBest of {len(t['iwh_walls_s'])} rounds: iwh {t['iwh_best_s']:.2f} s, tlparse -p "
                f"{t['tlparse_plain_best_s']:.2f} s: iwh {t['x_vs_plain_best']:.2f}x as fast")
    s = t.get("small_logs")
    if s:
        out += (f"\ntlparse's own test logs ({s['logs']} logs, {s['mb']:.1f} MB), best of {len(s['iwh_walls_s'])}: iwh "
                f"ingest --jobs 2 {s['iwh_best_s']:.3f} s, tlparse -p one call per log {s['tlparse_plain_best_s']:.3f} s: "
                f"iwh takes {s['iwh_over_plain_best']:.2f}x its time (median of rounds {s['iwh_over_plain']:.2f}x)")
    return out


def _growth(res: dict) -> str:
    rows = []
    for size, w in res["warehouses"].items():
        if size == "base":
            continue
        g = res.get("growth", {}).get(size, {})
        q = res.get("queries", {}).get(size, {})
        qs = sorted(v["median_ms"] for v in q.values())
        c = res.get("compare", {}).get(size, {})
        rows.append([int(size), w["rows"], w["file_mb"], w["build_s"], g.get("force_ingest_cpu15_s"),
                     g.get("reingest_unchanged_s"), qs[len(qs) // 2] if qs else None, qs[-1] if qs else None,
                     sum(1 for v in qs if v >= TARGETS["query_ms"]) if qs else None,
                     c.get("compare", {}).get("median_ms"), c.get("kernel_diff", {}).get("median_ms"),
                     c.get("command_ms")])
    return "\nGrowth with warehouse size (replicated runs; ms are medians)\n" + table(
        ["runs", "rows", "file MB", "build s", "ingest 15 CPU runs --force s", "re-ingest 82 unchanged s",
         "query median ms", "slowest query ms", f"queries >= {TARGETS['query_ms']:.0f} ms", "compare() ms",
         "kernel_diff() ms", "iwh compare cmd ms"], rows)


def _targets(res: dict) -> list[list]:
    rows = []
    if "ingest" in res and "jobs2" in res["ingest"]:
        r = res["ingest"]["jobs2"]
        v = r.get("best_mb_per_s", r["mb_per_s"])
        rows.append([f"full GPU ingest --jobs 2 >= {TARGETS['ingest_mb_s']:.0f} MB/s (best of repeats)",
                     f"{v:.1f} MB/s (median {r['mb_per_s']:.1f})", ok(v >= TARGETS["ingest_mb_s"])])
        rss = max(r["max_rss_mb"] for r in res["ingest"].values())
        rows.append(["peak RSS < 1 GB", f"{rss:.0f} MB", ok(rss < TARGETS["rss_mb"])])
    if "trace" in res and "x_vs_html" in res["trace"]:
        t = res["trace"]
        rows.append(["TORCH_TRACE ingest >= 10x tlparse HTML", f"{t['x_vs_html']:.1f}x", ok(t["x_vs_html"] >= 10)])
        x = t.get("x_vs_plain_best", t["x_vs_plain"])
        rows.append([f"TORCH_TRACE ingest >= {TARGETS['trace_x_plain']}x tlparse -p (best of rounds)",
                     f"{x:.2f}x (median of rounds {t['x_vs_plain']:.2f}x)", ok(x >= TARGETS["trace_x_plain"])])
        s = t.get("small_logs")
        if s:
            rows.append([f"tlparse's test logs: at most {TARGETS['small_logs_x_plain']}x tlparse -p's time (best)",
                         f"{s['iwh_over_plain_best']:.2f}x", ok(s["iwh_over_plain_best"] <= TARGETS["small_logs_x_plain"])])
    if "reingest" in res:
        v = res["reingest"]["wall_s"]
        rows.append([f"re-ingest unchanged < {TARGETS['reingest_s']} s", f"{v:.2f} s", ok(v < TARGETS["reingest_s"])])
    for size, limit in (("10000", TARGETS["query_ms"]), ("100000", TARGETS["query_ms_100k"])):
        qs = res.get("queries", {}).get(size)
        if qs:
            slow = {n: v["median_ms"] for n, v in qs.items() if v["median_ms"] >= limit}
            worst = max(v["median_ms"] for v in qs.values())
            rows.append([f"every canned query < {limit:.0f} ms at {int(size):,} runs", f"slowest {worst:.0f} ms"
                         + (f" ({', '.join(sorted(slow))})" if slow else ""), ok(not slow)])
    pages = res.get("dashboards", {}).get("100000")
    if pages:
        times = {p: v["median_ms"] for p, v in pages.items() if isinstance(v, dict) and "median_ms" in v}
        slow = sorted(p for p, v in times.items() if v >= TARGETS["page_ms_100k"])
        rows.append(["every page < 1 s cold at 100,000 runs", f"slowest {max(times.values()):.0f} ms"
                     + (f" ({', '.join(slow)})" if slow else ""), ok(not slow)])
    cmp = res.get("compare", {}).get("100000", {})
    if "command_ms" in cmp:
        rows.append(["iwh compare of two releases < 1 s at 100,000 runs", f"{cmp['command_ms']:.0f} ms",
                     ok(cmp["command_ms"] < TARGETS["compare_ms_100k"])])
    rss = [v for v in (cmp.get("max_rss_mb"), (pages or {}).get("max_rss_mb")) if v]
    if rss:
        rows.append(["peak RSS < 4 GB at 100,000 runs (dashboard, iwh compare)", f"{max(rss):.0f} MB",
                     ok(max(rss) < TARGETS["rss_mb_100k"])])
    if "lake" in res:
        from bench.lake import targets as lake_targets

        rows.extend(lake_targets(res["lake"]))
    if "nightlies" in res:
        from bench.year import targets as year_targets

        rows.extend(year_targets(res["nightlies"]))
    return rows


def _backfill(b: dict) -> str:
    c, o, p = b["configs"], b["overhead"], b["projection"]
    twin = {"ray_cpus1": (o["cpus1"]["x_wall_vs_local"], "local --jobs 1"),
            "ray_cpus2": (o["cpus2"]["x_wall_vs_local"], "local --jobs 2"),
            "s3_local_jobs2": (o["s3_x_local"], "disk"), "s3_ray_cpus2": (o["s3_x_ray"], "disk")}
    names = {"local_jobs1": "disk, local --jobs 1", "ray_cpus1": "disk, Ray of 1 CPU",
             "local_jobs2": "disk, local --jobs 2", "ray_cpus2": "disk, Ray of 2 CPUs",
             "s3_local_jobs2": "S3 (moto), local --jobs 2", "s3_ray_cpus2": "S3 (moto), Ray of 2 CPUs"}
    rows = []
    for key, r in c.items():
        x, of = twin.get(key, (None, ""))
        ray = "ray" in key
        rows.append([names.get(key, key), r["runs"], r["mb"], r["wall_s"], r["runs_per_s"], r["mb_per_s"],
                     f"{x:.2f}x {of}" if x else "", r["ray_start_s"] + r["ray_stop_s"] if ray else None,
                     r["work_mb_per_s"] if ray else None, r["write_s"], f"{100 * r['write_share']:.0f}%",
                     f"{r['writer_cpu_s']:.1f} ({r['writer_cpu_tasks_s']:.1f} while tasks ran)" if ray else r["writer_cpu_s"],
                     None if ray else r["cpu_s"]])
    out = [f"\nBackfill: the GPU archive through Ray tasks and from S3, {b['repeats']} rounds interleaved (medians; "
           "ratios per round). Ray's start and stop are paid once per ingest; a cluster already up does without "
           "them; its workers are not the ingest's children, so no CPU s (all). S3 is moto on 127.0.0.1 sharing the 2 "
           "cores: the read path's cost, not a network's\n" + table(
               ["what", "runs", "MB", "wall s", "runs/s", "MB/s", "speed vs", "Ray start+stop s",
                "MB/s less Ray start", "commit s", "commit share", "writer CPU s", "CPU s (all)"], rows)]
    pr = b["probe"]
    rows = [["ingest less Ray's start and stop, minus local ingest (ms per run)", o["cpus1"]["ms_per_run"],
             o["cpus2"]["ms_per_run"]],
            ["empty task, no argument (ms per task)", pr["cpus1"]["bare_ms"], pr["cpus2"]["bare_ms"]],
            ["empty task, a run's argument (ms per task)", pr["cpus1"]["run_args_ms"], pr["cpus2"]["run_args_ms"]],
            ["Ray start in an ingest: import + init (s)", c["ray_cpus1"]["ray_start_s"], c["ray_cpus2"]["ray_start_s"]],
            ["Ray stop in an ingest (s)", c["ray_cpus1"]["ray_stop_s"], c["ray_cpus2"]["ray_stop_s"]]]
    out.append("\nRay's cost per task (1 CPU: local --jobs 1 parses in the writer's own process, Ray beside it, "
               f"so the difference can be below zero; empty tasks: wall / {pr['cpus1']['tasks']} tasks through "
               "ray_tasks.imap_unordered on a started Ray)\n" + table(["what", "1 CPU", "2 CPUs"], rows))
    out.append(
        f"\nProjection: one Ray worker sustains {p['worker_runs_per_s']:.2f} runs/s ({p['worker_mb_per_s']:.1f} MB/s) "
        f"once Ray is up; two on these 2 shared cores {p['scaling_1_to_2']:.2f}x that. The one writer takes "
        f"{p['writer_commit_runs_per_s']:.1f} runs/s by its commit time, {p['writer_cpu_runs_per_s']:.1f} runs/s by "
        f"its CPU while the tasks ran: a ceiling of {p['writer_runs_per_s']:.1f} runs/s ({p['writer_mb_per_s']:.0f} "
        f"MB/s). A cluster ingests about min(workers x {p['worker_mb_per_s']:.1f}, {p['writer_mb_per_s']:.0f}) MB/s: "
        f"the writer bounds it from about {p['workers_to_saturate']:.0f} workers, fewer where results cross a "
        "network or the warehouse is large (growth section).")
    return "\n".join(out)


if __name__ == "__main__":
    import json
    import sys

    print(report(json.loads(OUT.read_text())))
    sys.exit(0)
