"""Run the zoo: each model x mode x dtype x variant under capture, several at once, under one
or more torch interpreters (one virtualenv per torch version).

    python -m zoo.run --python .venv-torch-2.13/bin/python --python .venv-torch-2.14.1/bin/python \\
        --models mlp,cnn --modes infer,train --out 'zoo_out/{device}-torch{torch}' --jobs 2 --profile

Run folders are named `<model>__<mode>__<dtype>__<variant>` under `--out`, whose `{torch}` and
`{device}` placeholders keep the versions apart. `--run NAME` (repeatable) picks single runs by that
name instead of the full product. Runs only capture; `--db` ingests them all at the end.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from inductor_warehouse.ingest.capture_command import capture, new_folder
from inductor_warehouse.ingest.parsers.manifest import RUN_NAME_DTYPES, RUN_NAME_MODES, run_name

WORKER = Path(__file__).with_name("worker.py")


@dataclass(frozen=True)
class ZooRun:
    model: str
    mode: str
    dtype: str
    variant: str

    @property
    def name(self) -> str:
        return f"{self.model}__{self.mode}__{self.dtype}__{self.variant}"

    @classmethod
    def from_name(cls, name: str) -> ZooRun:
        named = run_name(name)
        if named is None:
            raise ValueError(f"run name {name!r} is not model__mode__dtype__variant "
                             f"(mode {'|'.join(RUN_NAME_MODES)}, dtype {'|'.join(RUN_NAME_DTYPES)})")
        model, parts = named
        return cls(model, str(parts["mode"]), str(parts["dtype"]), str(parts["variant"]))


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    failed, run_dirs = [], []
    for python in args.python:
        offer = _offer(python)
        torch_version = _public_version(offer["torch"])
        out = Path(args.out.format(torch=torch_version, device=args.device.split(":")[0]))
        runs, skipped = _plan(args, offer)
        for run in skipped:
            print(f"skip {run.name}: not available under {python}", file=sys.stderr)
        print(f"{python} (torch {offer['torch']}): {len(runs)} runs into {out}", file=sys.stderr)
        results = _capture_all(python, runs, out, args)
        run_dirs += [r.out for r in results]
        failed += [r for r in results if not r.ok]
    if args.db and run_dirs:
        from inductor_warehouse.ingest.load import ingest_paths

        print(ingest_paths(run_dirs, args.db, jobs=args.jobs).line(), file=sys.stderr)
    print(f"{len(run_dirs)} runs captured, {len(failed)} failed"
          + "".join(f"\n  failed: {r.out}" for r in failed), file=sys.stderr)
    return 1 if failed else 0


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--python", action="append", default=[],
                   help="interpreter with torch (repeat for several versions) [default: this one]")
    p.add_argument("--out", default="zoo_out/{device}-torch{torch}")
    p.add_argument("--models", help="comma-separated [default: every model the interpreter can build]")
    p.add_argument("--modes", default="infer,train")
    p.add_argument("--dtypes", default="fp32")
    p.add_argument("--variants", default="default")
    p.add_argument("--run", action="append", default=[], metavar="MODEL__MODE__DTYPE__VARIANT",
                   help="one run by name, instead of the product of the lists above; repeatable")
    p.add_argument("--device", default="cpu")
    p.add_argument("--jobs", type=int, default=2, help="runs at a time")
    p.add_argument("--profile", action="store_true", help="record one profiled step to profile.json")
    p.add_argument("--steps", type=int, default=2, help="steady-state steps after compiling")
    p.add_argument("--timeout", type=float, default=1800, help="seconds before a run is killed")
    p.add_argument("--label", action="append", default=[], metavar="KEY=VALUE", help="extra label for every run")
    p.add_argument("--db", help="ingest every run into this warehouse at the end")
    p.add_argument("--cache", action="store_true",
                   help="Inductor's caches on: each run twice, cold (an empty cache folder of its own) then "
                        "warm (the same folder), into <out>/cold/ and <out>/warm/, labelled cache=cold|warm")
    args = p.parse_args(argv)
    args.python = args.python or [sys.executable]
    return args


def _offer(python: str) -> dict:
    """What the interpreter can run: asked of it, since each venv has its own optional packages."""
    listing = subprocess.run([python, str(WORKER), "--list"], capture_output=True, text=True, check=True)
    offer = json.loads(listing.stdout.strip().splitlines()[-1])
    version = subprocess.run([python, "-c", "import torch; print(torch.__version__)"],
                             capture_output=True, text=True, check=True)
    offer["torch"] = version.stdout.strip().splitlines()[-1]
    return offer


def _public_version(version: str) -> str:
    return version.split("+")[0]


def _plan(args, offer: dict) -> tuple[list[ZooRun], list[ZooRun]]:
    if args.run:
        runs = [ZooRun.from_name(name) for name in args.run]
    else:
        models = args.models.split(",") if args.models else offer["models"]
        lists = [models, args.modes.split(","), args.dtypes.split(","), args.variants.split(",")]
        runs = [ZooRun(*combo) for combo in itertools.product(*lists)]
    def runnable(r):
        return (r.model in offer["models"] and r.mode in offer["modes"]
                and r.dtype in offer["dtypes"] and r.variant in offer["variants"])
    return [r for r in runs if runnable(r)], [r for r in runs if not runnable(r)]


def _capture_all(python: str, runs: list[ZooRun], out: Path, args):
    extra_labels = dict(pair.split("=", 1) for pair in args.label)

    def one(run: ZooRun, run_dir: Path, cache_dir: Path | None = None, cache_label: str | None = None):
        cmd = [python, str(WORKER), "--model", run.model, "--mode", run.mode, "--dtype", run.dtype,
               "--variant", run.variant, "--device", args.device, "--steps", str(args.steps)]
        labels = {"mode": run.mode, "dtype": run.dtype, "variant": run.variant,
                  "device": args.device.split(":")[0], **extra_labels}
        if cache_label:
            labels["cache"] = cache_label
        run_dir = new_folder(run_dir)  # a run of an earlier zoo pass keeps its folder
        env = {"IWH_PROFILE": str(run_dir.resolve() / "profile.json")} if args.profile else None
        result = capture(cmd, run_dir, run.model, labels, env, echo=False, timeout_s=args.timeout, cache_dir=cache_dir)
        status = "ok" if result.ok else ("timed out" if result.timed_out else f"exit {result.exit_code}")
        print(f"  {run_dir.relative_to(out)}: {status}, {result.wall_s:.1f} s", file=sys.stderr, flush=True)
        return result

    def cold_then_warm(run: ZooRun):
        # a cache folder of the run's own, so nothing another run compiled warms it
        cache_dir = out / ".inductor-cache" / run.name
        shutil.rmtree(cache_dir, ignore_errors=True)
        cache_dir.mkdir(parents=True)
        return [one(run, out / phase / run.name, cache_dir, phase) for phase in ("cold", "warm")]

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        if args.cache:
            return [r for pair in pool.map(cold_then_warm, runs) for r in pair]
        return list(pool.map(lambda run: one(run, out / run.name), runs))


if __name__ == "__main__":
    sys.exit(main())
