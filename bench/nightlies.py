"""A year of a benchmark suite's nightlies, as CI writes them: every night, for each suite (torchbench,
huggingface, timm_models) and mode (training, inference), CI's two CSVs (`inductor_with_cudagraphs_
<suite>_<dtype>_<mode>_cuda_{performance,accuracy}.csv`, each model a row, the harness's own header
of 2.14) in a folder of the night with its manifest (`nightly`, `torch`), and, for a sample of nights,
compiles of the harness's captures beside them (the real runs of tests/fixtures/captures/
harness-timm.tar.xz, labelled with the night) for the page's links to the Run explorer.

    python -m bench.nightlies OUT [--days 365] [--models 180]   (bench.run's `nightlies` section)

The numbers are made, not measured (a fixed seed: the same year every time): each model has its
own speedup, compile time and memory ratio, noise of a few percent a night, a model failing now and
then (speedup 0, `fail_accuracy`), and a regression of a tenth of one suite's models from day 200 to
day 230, so that charts have a shape and HUD's rule something to find.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tarfile
from datetime import date, timedelta
from pathlib import Path

SUITES = ("torchbench", "huggingface", "timm_models")
MODES = {"training": "amp", "inference": "bfloat16"}
FIRST = date(2025, 1, 1)
PERF_HEADER = ("dev,name,batch_size,speedup,abs_latency,compilation_latency,compression_ratio,eager_peak_mem,"
               "dynamo_peak_mem,calls_captured,unique_graphs,fallbacks_to_eager,graph_breaks,unique_graph_breaks,"
               "autograd_captures,autograd_compiles,cudagraph_skips")
ACC_HEADER = ("dev,name,batch_size,accuracy,calls_captured,unique_graphs,fallbacks_to_eager,graph_breaks,"
              "unique_graph_breaks,autograd_captures,autograd_compiles,cudagraph_skips,compilation_latency")
# the captures' models, in the timm suite so that a night's rows link to its compiles
CAPTURED = ("mobilenetv2_100", "deit_tiny_patch16_224.fb_in1k", "repvgg_a2")
SAMPLE_EVERY = 30  # nights with compiles beside their CSVs
REGRESSED = ("huggingface", 200, 230, 0.8)  # suite, first and last day, speedup factor


def models(suite: str, n: int) -> list[str]:
    names = [f"{suite}_model_{i:03d}" for i in range(n)]
    if suite == "timm_models":
        names[:len(CAPTURED)] = CAPTURED
    return names


def write_year(out: Path, days: int = 365, n_models: int = 180, captures: Path | None = None) -> dict:
    """The year under `out` (a folder a night); how many nights, CSVs, rows and compiles."""
    rnd = random.Random(34)
    shape = {(s, m, name): (rnd.lognormvariate(0.25, 0.3), rnd.uniform(20, 120), rnd.uniform(0.8, 1.4),
                            rnd.randint(1, 64), rnd.randint(0, 4))
             for s in SUITES for m in MODES for name in models(s, n_models)}
    hit = set(rnd.sample(models(REGRESSED[0], n_models), max(1, n_models // 10)))
    counts = {"nights": 0, "csvs": 0, "rows": 0, "compiles": 0}
    for day in range(days):
        night = (FIRST + timedelta(days=day)).isoformat()
        torch = f"2.14.0.dev{night.replace('-', '')}+cu130"
        for suite in SUITES:
            for mode, dtype in MODES.items():
                folder = out / night / f"{suite}_{mode}"
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "manifest.json").write_text(json.dumps({"nightly": night, "torch": torch, "suite": suite}))
                perf, acc = [PERF_HEADER], [ACC_HEADER]
                for name in models(suite, n_models):
                    speedup, compile_s, ratio, batch, breaks = shape[(suite, mode, name)]
                    failed = rnd.random() < 0.02
                    if suite == REGRESSED[0] and REGRESSED[1] <= day <= REGRESSED[2] and name in hit:
                        speedup *= REGRESSED[3]
                    s = 0.0 if failed else speedup * rnd.gauss(1, 0.03)
                    c = compile_s * rnd.gauss(1, 0.05)
                    r = ratio * rnd.gauss(1, 0.01)
                    perf.append(f"cuda,{name},{batch},{s:.6f},{10 * s:.6f},{c:.6f},{r:.6f},{8 * r:.6f},8.000000,"
                                f"{100 + breaks},1,0,{breaks},{breaks},0,0,0")
                    verdict = "fail_accuracy" if failed and rnd.random() < 0.5 else "pass"
                    acc.append(f"cuda,{name},{max(1, batch // 8)},{verdict},{100 + breaks},1,0,{breaks},{breaks},0,0,0,"
                               f"{c * 0.9:.6f}")
                for kind, lines in (("performance", perf), ("accuracy", acc)):
                    name = f"inductor_with_cudagraphs_{suite}_{dtype}_{mode}_cuda_{kind}.csv"
                    (folder / name).write_text("\n".join(lines) + "\n")
                    counts["csvs"] += 1
                    counts["rows"] += len(lines) - 1
                if captures is not None and suite == "timm_models" and mode == "inference" and day % SAMPLE_EVERY == 0:
                    counts["compiles"] += _compiles(captures, folder / "compiles", night)
        counts["nights"] += 1
    return counts


def _compiles(captures: Path, dest: Path, night: str) -> int:
    """The 2.14.1 performance captures of the three models, their own CSVs left out (the night's
    CSV measures them), labelled with the night."""
    src = captures / "cpu-torch2.14.1" / "performance"
    n = 0
    for model in CAPTURED:
        target = dest / model
        shutil.copytree(src / model, target, ignore=shutil.ignore_patterns("*.csv", "inductor_*.json"))
        manifest = json.loads((target / "manifest.json").read_text())
        manifest.update(nightly=night, suite="timm_models", mode="inference")
        (target / "manifest.json").write_text(json.dumps(manifest))
        n += 1
    return n


def unpack_captures(work: Path) -> Path:
    archive = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "captures" / "harness-timm.tar.xz"
    dest = work / "harness-timm"
    if not (dest / "cpu-torch2.14.1").exists():
        with tarfile.open(archive) as tf:
            tf.extractall(dest, filter="data")
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--models", type=int, default=180)
    args = ap.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    print(json.dumps(write_year(args.out, args.days, args.models, unpack_captures(args.out.parent))))


if __name__ == "__main__":
    main()
