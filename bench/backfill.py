"""Backfill section: the 67 GPU runs ingested with Ray tasks (a local Ray of 1 and of 2 CPUs) beside
local processes (--jobs 1 and 2), Ray's cost per task, the writer's share of the work, and the same
runs read from object storage (moto's S3 server on 127.0.0.1), all in the same run.

Each ingest is `iwh` in a process of its own, run through `_timed_iwh`, which also reports what
only the inside can tell: how long the writer spent committing, its own CPU, and how long Ray took
to start and stop. A cluster is projected from those: about workers x the rate of one Ray worker,
until the one writer's rate bounds it.
"""

from __future__ import annotations

import atexit
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench import corpus
from bench.ingest import SUMMARY_RE
from bench.measure import ROOT, Proc, check, median, run

TIMES = "iwh-bench-times "
# `iwh` as bench.measure.IWH runs it, with the timers of _timed_iwh around it
IWH = [sys.executable, "-c", "from bench.backfill import _timed_iwh; _timed_iwh()"]
BUCKET = "bench"
PROBE_TASKS = 200  # empty tasks per probe: many enough to time, few enough for 2 cores


def missing() -> str | None:
    """Why the section cannot run here, if it cannot."""
    for module, extra in (("ray", "ray"), ("boto3", "s3"), ("moto", "test")):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed (pip install -e '.[{extra}]')"
    if not Path(sys.executable).with_name("moto_server").exists():
        return "moto_server is not installed (pip install -e '.[test]')"
    return None


def _timed_iwh() -> None:
    """`iwh` with timers around the writer's commits and Ray's start and stop; they are printed
    after the command's own output, so its summary line is read as ever."""
    from inductor_warehouse.ingest import load, ray_tasks, write

    t: dict[str, float] = {"write_s": 0.0, "discover_s": 0.0, "ray_start_s": 0.0, "ray_stop_s": 0.0}

    def timer(key: str, fn):
        def timed(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                t[key] += time.perf_counter() - t0
        return timed

    write.commit = timer("write_s", write.commit)
    write.fail = timer("write_s", write.fail)  # a failed run's error row is the writer's work too
    load.discover_anywhere = timer("discover_s", load.discover_anywhere)

    imap, init = ray_tasks.imap_unordered, ray_tasks._init
    called: list[float] = []

    def timed_imap(*a, **k):
        called.append(time.perf_counter())  # `import ray` comes next: part of its start
        yield from imap(*a, **k)

    def cpu() -> float:
        me = resource.getrusage(resource.RUSAGE_SELF)
        return me.ru_utime + me.ru_stime

    def timed_init(ray, *a, **k):
        init(ray, *a, **k)
        t["ray_start_s"] += time.perf_counter() - called[-1]
        ready = cpu()
        stop = timer("ray_stop_s", ray.shutdown)

        def timed_stop(*a, **k):
            # what the writer's process spent while the tasks ran: receiving results, committing,
            # Ray's driver threads; its start-up (imports, Ray's start) is paid once, not per run
            t["writer_cpu_tasks_s"] = cpu() - ready
            return stop(*a, **k)

        ray.shutdown = timed_stop

    ray_tasks.imap_unordered, ray_tasks._init = timed_imap, timed_init
    from inductor_warehouse.cli.main import main

    def report():
        t["writer_cpu_s"] = cpu()  # this process only: the writer, not the parse workers
        print(TIMES + json.dumps(t), flush=True)

    atexit.register(report)  # main() ends the process: it runs atexit handlers, not finally blocks
    main()


def _ingest(source: str, db: Path, jobs: int, executor: str, env: dict) -> tuple[Proc, dict]:
    for p in (db, Path(f"{db}.wal")):
        p.unlink(missing_ok=True)
    proc = check(run(IWH + ["--db", str(db), "ingest", source, "--jobs", str(jobs), "--executor", executor], env=env),
                 f"iwh ingest --executor {executor} --jobs {jobs} {source}")
    m = SUMMARY_RE.search(proc.output)
    times = [line for line in proc.output.splitlines() if line.startswith(TIMES)]
    if m is None or not times:
        raise RuntimeError(f"no summary line in:\n{proc.output[-2000:]}")
    if "failed to parse" in proc.output or "refused by the warehouse" in proc.output:
        # a run lost on one path and not the other would make the rates incomparable
        raise RuntimeError(f"iwh ingest --executor {executor} {source} lost runs:\n{proc.output[-2000:]}")
    return proc, {"runs": int(m.group(1)), "mb": float(m.group(3)), **json.loads(times[-1][len(TIMES):])}


def _summarise(rows: list[tuple[Proc, dict]]) -> dict:
    walls = [p.wall_s for p, _ in rows]
    # Ray's start and stop are paid once per ingest, not per run: a cluster that is already up
    # does without them, so the rate a worker sustains leaves them out
    work = [p.wall_s - i["ray_start_s"] - i["ray_stop_s"] for p, i in rows]
    runs, mb = rows[0][1]["runs"], rows[0][1]["mb"]
    wall, work_s = median(walls), median(work)
    write = median([i["write_s"] for _, i in rows])
    return {
        "runs": runs, "mb": mb, "wall_s": wall, "walls_s": [round(w, 2) for w in walls],
        "mb_per_s": mb / wall, "runs_per_s": runs / wall,
        "ray_start_s": median([i["ray_start_s"] for _, i in rows]),
        "ray_stop_s": median([i["ray_stop_s"] for _, i in rows]),
        "work_s": work_s, "work_mb_per_s": mb / work_s, "work_runs_per_s": runs / work_s,
        "discover_s": median([i["discover_s"] for _, i in rows]),
        "write_s": write, "write_share": median([i["write_s"] / w for (_, i), w in zip(rows, work, strict=True)]),
        "writer_cpu_s": median([i["writer_cpu_s"] for _, i in rows]),
        "writer_cpu_tasks_s": median([i.get("writer_cpu_tasks_s", 0.0) for _, i in rows]),
        # wait4 counts only children waited for: Ray's workers belong to its raylet, not to the ingest
        "cpu_s": median([p.cpu_s for p, _ in rows]), "max_rss_mb": max(p.max_rss_mb for p, _ in rows),
    }


def _probe(cpus: int, tasks: int, repeats: int) -> None:
    """Empty tasks through ray_tasks.imap_unordered on a Ray already started: what each task costs
    beyond its parse. Twice: with no argument, and with a real run's argument (the run's file list
    and the warehouse's schema, sent with every task). Prints one JSON line."""
    import logging

    import ray

    from inductor_warehouse.ingest import ray_tasks
    from inductor_warehouse.ingest.convert import Columns
    from inductor_warehouse.ingest.remote import discover_anywhere
    from inductor_warehouse.store.writer import Writer

    tmp = Path(tempfile.mkdtemp(prefix="iwh-probe-"))
    try:
        with Writer(str(tmp / "wh.duckdb")) as w, w.session() as con:
            schema = Columns(con)
        runs = discover_anywhere([corpus.gpu_runs()]).runs
        work = [(runs[i % len(runs)], (schema, None, None, "2025-01-01T00:00:00")) for i in range(tasks)]
        t0 = time.perf_counter()
        ray.init(num_cpus=cpus, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
        start = time.perf_counter() - t0

        def once(items) -> float:
            t0 = time.perf_counter()
            for _, _, error in ray_tasks.imap_unordered(_nothing, items, address=None, cpus=cpus):
                if error is not None:
                    raise error
            return time.perf_counter() - t0

        once(work[: 4 * cpus])  # workers started and the function shipped: not part of a task's cost
        bare = [once(list(range(tasks))) for _ in range(repeats)]
        args = [once(work) for _ in range(repeats)]
        t0 = time.perf_counter()
        ray.shutdown()
        stop = time.perf_counter() - t0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps({"cpus": cpus, "tasks": tasks, "start_s": start, "stop_s": stop,
                      "bare_ms": median(bare) * 1000 / tasks, "run_args_ms": median(args) * 1000 / tasks,
                      "bare_all_ms": [round(b * 1000 / tasks, 3) for b in bare],
                      "run_args_all_ms": [round(a * 1000 / tasks, 3) for a in args]}), flush=True)


def _nothing(_item) -> None:
    return None


def probe(cpus: int, repeats: int, env: dict) -> dict:
    p = check(run([sys.executable, "-c", f"from bench.backfill import _probe; _probe({cpus}, {PROBE_TASKS}, {repeats})"],
                  env=env), f"the empty-task probe on {cpus} CPUs")
    return json.loads(p.output.strip().splitlines()[-1])


def _upload(s3, root: Path, prefix: str) -> str:
    from concurrent.futures import ThreadPoolExecutor

    c = s3.client()
    c.create_bucket(Bucket=BUCKET)
    files = [f for f in sorted(root.rglob("*")) if f.is_file()]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda f: c.upload_file(str(f), BUCKET, f"{prefix}/{f.relative_to(root).as_posix()}"), files))
    return f"s3://{BUCKET}/{prefix}"


CONFIGS = (  # (key, where, executor, jobs): local configurations first, each Ray one after its local twin
    ("local_jobs1", "disk", "local", 1), ("ray_cpus1", "disk", "ray", 1),
    ("local_jobs2", "disk", "local", 2), ("ray_cpus2", "disk", "ray", 2),
    ("s3_local_jobs2", "s3", "local", 2), ("s3_ray_cpus2", "s3", "ray", 2),
)


def backfill(repeats: int, log=lambda msg: None) -> dict:
    from tests.servers import S3

    gpu = corpus.gpu_runs()
    tmp = Path(tempfile.mkdtemp(prefix="iwh-backfill-"))
    # every process imports this checkout's modules, Ray's workers too (they do not start in it);
    # Ray's session folders (logs, sockets) go to the temp folder, removed at the end
    env = {"PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0", "RAY_TMPDIR": str(tmp)}
    s3 = S3()
    try:
        s3.start()
        env_s3 = {**env, **s3.env}
        t0 = time.perf_counter()
        url = _upload(s3, gpu, "gpu")
        upload_s = time.perf_counter() - t0
        log(f"  uploaded {corpus.size_mb([gpu]):.0f} MB to moto in {upload_s:.1f} s")
        sources = {"disk": (str(gpu), env), "s3": (url, env_s3)}
        raw: dict[str, list] = {k: [] for k, *_ in CONFIGS}
        for i in range(repeats):  # interleaved: a busy spell on the shared machine hits every configuration alike
            for key, where, executor, jobs in CONFIGS:
                source, e = sources[where]
                proc, info = _ingest(source, tmp / f"{key}.duckdb", jobs, executor, e)
                raw[key].append((proc, info))
                log(f"  round {i + 1}/{repeats} {key}: {proc.wall_s:.1f} s")
        out = {"configs": {k: _summarise(v) for k, v in raw.items()}, "upload_s": upload_s, "repeats": repeats}
        log(f"  empty tasks through imap_unordered, {PROBE_TASKS} a round ...")
        out["probe"] = {f"cpus{n}": probe(n, max(3, repeats), env) for n in (1, 2)}
    finally:
        s3.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    # per round, then the median: each ratio and difference compares ingests made back to back
    def per_round(a: str, b: str, f) -> float:
        return median([f(x, y) for x, y in zip(raw[a], raw[b], strict=True)])

    def work(r) -> float:
        return r[0].wall_s - r[1]["ray_start_s"] - r[1]["ray_stop_s"]

    over = {}
    for n in (1, 2):
        ray, local = f"ray_cpus{n}", f"local_jobs{n}"
        over[f"cpus{n}"] = {
            "x_wall_vs_local": per_round(ray, local, lambda r, base: base[0].wall_s / r[0].wall_s),
            "x_work_vs_local": per_round(ray, local, lambda r, base: base[0].wall_s / work(r)),
            "ms_per_run": per_round(ray, local, lambda r, base: (work(r) - base[0].wall_s) * 1000 / r[1]["runs"]),
        }
    over["s3_x_local"] = per_round("s3_local_jobs2", "local_jobs2", lambda s, d: d[0].wall_s / s[0].wall_s)
    over["s3_x_ray"] = per_round("s3_ray_cpus2", "ray_cpus2", lambda s, d: d[0].wall_s / s[0].wall_s)
    out["overhead"] = over
    out["projection"] = project(out)
    return out


def project(res: dict) -> dict:
    """Cluster throughput ~ workers x one Ray worker's rate (its ingest less Ray's start and stop),
    until the one writer is busy all the time. Its rate is bounded twice: by the runs it commits
    per second of committing beside one worker (a core each, as a writer on a machine of its own
    would have), and by the runs per second of its process's CPU while two workers' tasks ran
    (receiving results and Ray's driver threads besides the commits). The lower is the ceiling."""
    c = res["configs"]
    one, two = c["ray_cpus1"], c["ray_cpus2"]
    mb_per_run = one["mb"] / one["runs"]
    commit = one["runs"] / one["write_s"]
    cpu = two["runs"] / two["writer_cpu_tasks_s"]
    worker = one["work_runs_per_s"]
    ceiling = min(commit, cpu)
    return {"worker_runs_per_s": worker, "worker_mb_per_s": worker * mb_per_run,
            "scaling_1_to_2": two["work_runs_per_s"] / worker,
            "writer_commit_runs_per_s": commit, "writer_cpu_runs_per_s": cpu,
            "writer_runs_per_s": ceiling, "writer_mb_per_s": ceiling * mb_per_run,
            "workers_to_saturate": ceiling / worker}
