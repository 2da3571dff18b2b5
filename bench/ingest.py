"""Ingest sections: the GPU archive with --jobs 1 and 2, re-ingest of the unchanged corpus, and
TORCH_TRACE-only ingest against tlparse on the same logs, in the same run."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

from bench import corpus
from bench.measure import IWH, Proc, check, median, run

SUMMARY_RE = re.compile(r"ingested (\d+) runs(?: \((\d+) unchanged, skipped\))?.* \(([\d.]+) MB, ")


def _fresh(db: Path) -> None:
    for p in (db, Path(f"{db}.wal")):
        p.unlink(missing_ok=True)


def ingest(paths: list[Path], db: Path, jobs: int) -> tuple[Proc, dict]:
    proc = check(run(IWH + ["--db", str(db), "ingest", *map(str, paths), "--jobs", str(jobs)]), "iwh ingest")
    m = SUMMARY_RE.search(proc.output)
    if m is None:
        raise RuntimeError(f"no summary line in:\n{proc.output[-2000:]}")
    return proc, {"runs": int(m.group(1)), "skipped": int(m.group(2) or 0), "mb": float(m.group(3))}


def _summarise(procs: list[Proc], mb: float, runs: int) -> dict:
    wall = median([p.wall_s for p in procs])
    cpu = median([p.cpu_s for p in procs])
    best = min(p.wall_s for p in procs)
    return {
        "runs": runs, "mb": mb, "wall_s": wall, "walls_s": [round(p.wall_s, 2) for p in procs],
        "cpu_s": cpu, "mb_per_s": mb / wall, "runs_per_s": runs / wall, "mb_per_cpu_s": mb / cpu,
        "best_wall_s": best, "best_mb_per_s": mb / best,
        "max_rss_mb": max(p.max_rss_mb for p in procs),
    }


def full_ingest(repeats: int) -> dict:
    """Fresh warehouses from the 67 GPU runs; the --jobs 2 one is kept for the re-ingest."""
    gpu = corpus.gpu_runs()
    out = {}
    for jobs in (1, 2):
        db = corpus.WORK / f"ingest_jobs{jobs}.duckdb"
        procs, info = [], {}
        for _ in range(repeats):
            _fresh(db)
            proc, info = ingest([gpu], db, jobs)
            procs.append(proc)
        out[f"jobs{jobs}"] = _summarise(procs, info["mb"], info["runs"])
    return out


def reingest(repeats: int) -> dict:
    """The unchanged corpus again: every run is skipped by its recorded file sizes and mtimes."""
    gpu = corpus.gpu_runs()
    db = corpus.WORK / "ingest_jobs2.duckdb"
    if not db.exists():
        ingest([gpu], db, 2)
    procs = []
    for _ in range(repeats):
        proc, info = ingest([gpu], db, 2)
        if info["runs"] != 0:
            raise RuntimeError(f"re-ingest read {info['runs']} runs; expected all skipped")
        procs.append(proc)
    return {"runs_skipped": info["skipped"], "wall_s": median([p.wall_s for p in procs]),
            "best_wall_s": min(p.wall_s for p in procs), "walls_s": [round(p.wall_s, 2) for p in procs],
            "cpu_s": median([p.cpu_s for p in procs]),
            "max_rss_mb": max(p.max_rss_mb for p in procs)}


def _tlparse() -> str | None:
    local = Path(sys.executable).with_name("tlparse")
    return str(local) if local.exists() else shutil.which("tlparse")


def _tlparse_all(exe: str, logs: list[Path], plain: bool) -> tuple[float, float, int]:
    """tlparse takes one log per call: the summed wall and CPU seconds of one call per log."""
    out_dir = corpus.WORK / "tlparse_out"
    wall = cpu = 0.0
    failed = 0
    for log in logs:
        cmd = [exe, str(log), "-o", str(out_dir), "--overwrite", "--no-browser"] + (["-p"] if plain else [])
        p = run(cmd)
        wall += p.wall_s
        cpu += p.cpu_s
        failed += p.rc != 0
    return wall, cpu, failed


def parse_only(folder: str, db: str, jobs: int) -> None:
    """What bounds the trace ingest: `iwh ingest` of `folder` without the warehouse. Its parse
    workers turn the logs into Arrow tables and hand them over, as they do for the writer, and the
    tables are dropped. Run as a command of its own (`trace_only`), imports included; `db`, an
    existing warehouse, gives the column types."""
    from inductor_warehouse.cli.lean import lean_imports
    lean_imports()
    import duckdb

    from inductor_warehouse.ingest import load
    from inductor_warehouse.ingest.convert import Columns
    from inductor_warehouse.ingest.remote import discover_anywhere
    runs = discover_anywhere([folder]).runs
    con = duckdb.connect(db, read_only=True)
    schema = Columns(con)
    con.close()
    parsed = sum(1 for _ in load.parse_all(runs, jobs, (schema, None, None, "")))
    print(f"parsed {parsed} runs")


def trace_only(repeats: int) -> dict:
    exe = _tlparse()
    folder = corpus.trace_folder()
    logs = corpus.trace_logs()
    mb = corpus.size_mb(logs)
    db = corpus.WORK / "traces.duckdb"
    ours, parse, html, plain = [], [], [], []
    failed = 0
    for _ in range(repeats):  # interleaved, so a busy spell on the machine hits all of them alike
        _fresh(db)
        proc, info = ingest([folder], db, 2)
        ours.append((proc.wall_s, proc.cpu_s))
        p = check(run([sys.executable, "-c", "import sys; from bench.ingest import parse_only; "
                       "parse_only(sys.argv[1], sys.argv[2], 2)", str(folder), str(db)]), "parse only")
        parse.append((p.wall_s, p.cpu_s))
        if exe:
            w, c, f = _tlparse_all(exe, logs, plain=False)
            html.append((w, c))
            w, c, f2 = _tlparse_all(exe, logs, plain=True)
            plain.append((w, c))
            failed = max(failed, f + f2)
    res = {"logs": len(logs), "mb": mb, "runs_ingested": info["runs"],
           "iwh_wall_s": median([w for w, _ in ours]), "iwh_cpu_s": median([c for _, c in ours]),
           "iwh_walls_s": [round(w, 2) for w, _ in ours], "iwh_best_s": min(w for w, _ in ours),
           "parse_only_wall_s": median([w for w, _ in parse]), "parse_only_cpu_s": median([c for _, c in parse])}
    res["iwh_mb_per_s"] = mb / res["iwh_wall_s"]
    if not exe:
        res["tlparse"] = "not installed (pip install -e '.[bench]')"
        return res
    res.update({
        "tlparse_html_wall_s": median([w for w, _ in html]), "tlparse_html_cpu_s": median([c for _, c in html]),
        "tlparse_plain_wall_s": median([w for w, _ in plain]), "tlparse_plain_cpu_s": median([c for _, c in plain]),
        "tlparse_plain_walls_s": [round(w, 2) for w, _ in plain], "tlparse_plain_best_s": min(w for w, _ in plain),
        "tlparse_failed_calls": failed,
    })
    # per repeat, then the median: each ratio compares runs made back to back
    res["x_vs_html"] = median([h[0] / o[0] for o, h in zip(ours, html, strict=True)])
    res["x_vs_plain"] = median([p[0] / o[0] for o, p in zip(ours, plain, strict=True)])
    res["parse_only_x_vs_plain"] = median([p[0] / o[0] for o, p in zip(parse, plain, strict=True)])
    # the best of each: what each does when the machine leaves it alone
    res["x_vs_plain_best"] = res["tlparse_plain_best_s"] / res["iwh_best_s"]
    small = small_logs(exe, repeats)
    if small:
        res["small_logs"] = small
    return res


def small_logs(exe: str, repeats: int) -> dict | None:
    """tlparse's own test logs (../shared/corpus/tlparse-logs: 9 logs, 6 MB, most of them small):
    `iwh ingest --jobs 2` of their folder against `tlparse -p` on each log in turn, interleaved;
    start-up counts here more than the parse."""
    folder = corpus.SHARED / "tlparse-logs"
    logs = sorted(folder.rglob("*.log"))
    if not logs:
        return None
    db = corpus.WORK / "tlparse_logs.duckdb"
    ours, plain = [], []
    for _ in range(repeats):
        _fresh(db)
        proc, info = ingest([folder], db, 2)
        ours.append(proc.wall_s)
        plain.append(_tlparse_all(exe, logs, plain=True)[0])
    return {"logs": len(logs), "mb": corpus.size_mb(logs), "runs_ingested": info["runs"],
            "iwh_walls_s": [round(w, 3) for w in ours], "tlparse_plain_walls_s": [round(w, 3) for w in plain],
            "iwh_best_s": min(ours), "tlparse_plain_best_s": min(plain),
            "iwh_over_plain_best": min(ours) / min(plain),
            "iwh_over_plain": median([o / p for o, p in zip(ours, plain, strict=True)])}
