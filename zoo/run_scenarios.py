"""Capture the production compile modes of `zoo/scenarios.py`, each under `iwh capture`.

    python -m zoo.run_scenarios --python .venv-torch-2.13/bin/python --out 'zoo_out/{device}-torch{torch}-modes'
    python -m zoo.run_scenarios --scenarios ddp,aoti --device cuda --jobs 3

Run folders are `<out>/<scenario>/`, labelled `scenario=<name>` (and mode, dtype, variant, device,
as the zoo's runs are). Distributed scenarios run under `torchrun --standalone --nproc-per-node N`:
one manifest for the job, one trace log and one debug folder per rank, as torchrun leaves them.
The export scenario also sets TORCH_DTRACE, without which torch.export logs neither its program
nor its guards. Imports only the standard library (and `ingest.capture`), so it runs on a machine
that has torch but not the warehouse; `--db` ingests the runs at the end where it is installed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from inductor_warehouse.ingest.capture_command import capture, new_folder

WORKER = Path(__file__).with_name("scenarios.py")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--python", action="append", default=[], help="interpreter with torch (repeatable)")
    p.add_argument("--out", default="zoo_out/{device}-torch{torch}-modes")
    p.add_argument("--scenarios", help="comma-separated [default: all]")
    p.add_argument("--device", default="cpu")
    p.add_argument("--jobs", type=int, default=1, help="captures at a time")
    p.add_argument("--timeout", type=float, default=900, help="seconds before a capture is killed")
    p.add_argument("--db", help="ingest every run into this warehouse at the end")
    args = p.parse_args(argv)
    failed, dirs = [], []
    for python in args.python or [sys.executable]:
        listing = json.loads(subprocess.run([python, str(WORKER), "--list"], capture_output=True, text=True,
                                            check=True).stdout.strip().splitlines()[-1])
        torch = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                               text=True, check=True).stdout.split()[-1]
        out = Path(args.out.format(torch=torch.split("+")[0], device=args.device.split(":")[0]))
        names = args.scenarios.split(",") if args.scenarios else listing["scenarios"]
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(_one, [python] * len(names), names, [out] * len(names), [args] * len(names),
                                    [listing["distributed"]] * len(names)))
        dirs += [r.out for r in results]
        failed += [r for r in results if not r.ok]
    if args.db and dirs:
        from inductor_warehouse.ingest.load import ingest_paths

        print(ingest_paths(dirs, args.db).line(), file=sys.stderr)
    print(f"{len(dirs)} scenarios captured, {len(failed)} failed" + "".join(f"\n  failed: {r.out}" for r in failed),
          file=sys.stderr)
    return 1 if failed else 0


def _one(python: str, scenario: str, out: Path, args, distributed: dict):
    run_dir = new_folder(out / scenario)  # a run of an earlier pass keeps its folder
    cmd = [python, str(WORKER), "--scenario", scenario, "--device", args.device]
    if scenario in distributed:
        cmd[1:1] = ["-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={distributed[scenario]}"]
    env = {"TORCH_DTRACE": str(run_dir.resolve() / "trace")} if scenario == "export" else None
    labels = {"scenario": scenario, "mode": "infer" if scenario not in ("compiled_optimizer", "ddp") else "train",
              "dtype": "fp32", "variant": "default", "device": args.device.split(":")[0]}
    result = capture(cmd, run_dir, scenario, labels, env, echo=False, timeout_s=args.timeout)
    status = "ok" if result.ok else ("timed out" if result.timed_out else f"exit {result.exit_code}")
    print(f"  {run_dir}: {status}, {result.wall_s:.1f} s", file=sys.stderr, flush=True)
    return result


if __name__ == "__main__":
    sys.exit(main())
